//! The reference KIP engine, `anda_cognitive_nexus` 0.11.0 (KIP RC10), in
//! memory, behind the same "KIP text in, JSON text out" call the other
//! sides of `somnus bench --compare` get. Compiled only with the
//! `reference` feature.

use anda_cognitive_nexus::{CognitiveNexus, db_to_kip_error};
use anda_db::database::{AndaDB, DBConfig};
use anda_db::storage::StorageConfig;
use anda_kip::{Executor, Response, parse_kip};
use object_store::memory::InMemory;
use std::sync::Arc;

pub struct Reference {
    rt: tokio::runtime::Runtime,
    nexus: CognitiveNexus,
}

impl Reference {
    /// A fresh in-memory store with the reference's own bootstrap capsules.
    pub fn new() -> Result<Reference, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let nexus = rt
            .block_on(async {
                let config = DBConfig {
                    name: "somnus_compare".to_string(),
                    description: "somnus bench --compare".to_string(),
                    storage: StorageConfig {
                        compress_level: 0,
                        ..Default::default()
                    },
                    lock: None,
                };
                let db = AndaDB::connect(Arc::new(InMemory::new()), config)
                    .await
                    .map_err(db_to_kip_error)?;
                CognitiveNexus::connect(Arc::new(db), async |_| Ok(())).await
            })
            .map_err(|e| format!("the reference engine did not start: {e:?}"))?;
        Ok(Reference { rt, nexus })
    }

    /// KIP text in, the JSON answer out.
    pub fn kip(&mut self, text: &str) -> Result<String, String> {
        let cmd = parse_kip(text).map_err(|e| format!("reference: {e:?}"))?;
        match self.rt.block_on(self.nexus.execute(cmd, false)) {
            Response::Ok { result, .. } => {
                serde_json::to_string(&result).map_err(|e| e.to_string())
            }
            Response::Err { error, .. } => Err(format!("reference: {error:?}")),
        }
    }
}

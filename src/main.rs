use clap::Parser;

/// mimalloc: the engine allocates many small JSON values per answer.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(unix)]
unsafe extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
}

fn main() -> color_eyre::Result<()> {
    // `somnus audit | head` ends quietly when the reader goes away, like
    // any Unix tool, instead of panicking on a closed pipe.
    #[cfg(unix)]
    // SAFETY: restores the default action for SIGPIPE (13) before any
    // thread starts; no handler code runs.
    unsafe {
        signal(13, 0);
    }
    color_eyre::install()?;
    let cli = somnus::cli::Cli::parse();
    match somnus::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        // a mistake on the command line is not a crash: say what went
        // wrong, without a backtrace
        Err(e) => {
            eprintln!("error: {}", somnus::text::printable(&e.to_string()));
            for cause in e.chain().skip(1) {
                eprintln!("  because: {}", somnus::text::printable(&cause.to_string()));
            }
            std::process::exit(2);
        }
    }
}

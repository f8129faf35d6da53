//! One PostgreSQL connection as the engine drives it: a client and its
//! connection on a small runtime of their own, run to completion on the
//! calling thread (the engine is synchronous), with two things a plain
//! blocking client cannot do:
//!
//! - **pipelining**: a statement sent right behind another without
//!   waiting for the first one's answer ([`PgSession::query_with`]: a
//!   transaction's `BEGIN`, and a write's audit entry, travel with its
//!   first query, one round trip for all);
//! - **sending without waiting** ([`PgSession::send`]: a read's closing
//!   `ROLLBACK` is written to the socket and its answer read with the next
//!   request's, since nothing depends on it).
//!
//! The server answers requests in the order they were sent, so a later
//! request never overtakes one sent without waiting.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::{Context, Poll};
use tokio_postgres::tls::NoTlsStream;
use tokio_postgres::types::ToSql;
use tokio_postgres::{
    CancelToken, Client, Connection, Error, NoTls, Row, Socket, Statement, ToStatement,
};

/// A connected session.
pub struct PgSession {
    rt: tokio::runtime::Runtime,
    /// (dropped by hand, before the connection says goodbye: see `Drop`)
    client: std::mem::ManuallyDrop<Client>,
    link: Link,
}

/// The connection under a client: it writes requests and reads answers
/// when polled.
struct Link {
    conn: Box<Connection<Socket, NoTlsStream>>,
    /// It ended (the server closed it, or it failed): it is not polled
    /// again, and every request fails.
    ended: bool,
    /// Why it ended, for the request that was waiting then.
    failure: Option<Error>,
}

/// Why a session could not start.
#[derive(Debug)]
pub enum Failure {
    /// Its runtime could not start (the process is out of threads or
    /// file descriptors).
    Runtime(std::io::Error),
    /// The server refused or could not be reached.
    Postgres(Error),
}

/// Parameters as the client takes them.
pub type Params<'a> = [&'a (dyn ToSql + Sync)];

/// A prepared query and its parameters, sent ahead of another.
pub type Pre<'a> = (&'a Statement, &'a Params<'a>);

impl PgSession {
    /// Connects with `cfg`.
    pub fn connect(cfg: &tokio_postgres::Config) -> Result<PgSession, Failure> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Failure::Runtime)?;
        let (client, conn) = rt.block_on(cfg.connect(NoTls)).map_err(Failure::Postgres)?;
        Ok(PgSession {
            rt,
            client: std::mem::ManuallyDrop::new(client),
            link: Link {
                conn: Box::new(conn),
                ended: false,
                failure: None,
            },
        })
    }

    pub fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        let fut = self.client.prepare(sql);
        run_on(&self.rt, &mut self.link, &self.client, fut)
    }

    pub fn query<S: ?Sized + ToStatement>(
        &mut self,
        st: &S,
        params: &Params<'_>,
    ) -> Result<Vec<Row>, Error> {
        let fut = self.client.query(st, params);
        run_on(&self.rt, &mut self.link, &self.client, fut)
    }

    pub fn execute<S: ?Sized + ToStatement>(
        &mut self,
        st: &S,
        params: &Params<'_>,
    ) -> Result<u64, Error> {
        let fut = self.client.execute(st, params);
        run_on(&self.rt, &mut self.link, &self.client, fut)
    }

    /// Runs statements separated by `;`, without parameters.
    pub fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        let fut = self.client.batch_execute(sql);
        run_on(&self.rt, &mut self.link, &self.client, fut)
    }

    /// Sends `first` (statements without parameters, such as a `BEGIN`)
    /// and the query `pre` (a query whose answer is wanted later), each if
    /// given, right behind them the query `st`, and behind it `last`
    /// (statements without parameters, such as a `COMMIT`), without
    /// waiting in between: one round trip for all. Errors come in the
    /// order sent; `pre`'s rows come with `st`'s.
    pub fn query_with(
        &mut self,
        first: Option<&str>,
        pre: Option<Pre<'_>>,
        st: &Statement,
        params: &Params<'_>,
        last: Option<&str>,
    ) -> Result<(Option<Vec<Row>>, Vec<Row>), Error> {
        let p = pre.map(|(s, a)| self.client.query(s, a));
        let b = self.client.query(st, params);
        run_behind(&self.rt, &mut self.link, &self.client, first, p, b, last)
    }

    /// [`PgSession::query_with`] for a statement whose row count is
    /// wanted.
    pub fn execute_with(
        &mut self,
        first: Option<&str>,
        pre: Option<Pre<'_>>,
        st: &Statement,
        params: &Params<'_>,
        last: Option<&str>,
    ) -> Result<(Option<Vec<Row>>, u64), Error> {
        let p = pre.map(|(s, a)| self.client.query(s, a));
        let b = self.client.execute(st, params);
        run_behind(&self.rt, &mut self.link, &self.client, first, p, b, last)
    }

    /// [`PgSession::query_with`] for statements without parameters.
    pub fn batch_with(
        &mut self,
        first: Option<&str>,
        pre: Option<Pre<'_>>,
        sql: &str,
        last: Option<&str>,
    ) -> Result<Option<Vec<Row>>, Error> {
        let p = pre.map(|(s, a)| self.client.query(s, a));
        let b = self.client.batch_execute(sql);
        run_behind(&self.rt, &mut self.link, &self.client, first, p, b, last).map(|(rows, ())| rows)
    }

    /// Sends statements and returns without their answer: they are
    /// written to the socket now and answered while the next request
    /// waits (their errors are not seen; a connection that failed is
    /// found by the next request).
    pub fn send(&mut self, sql: &str) {
        let fut = self.client.batch_execute(sql);
        let mut fut = pin!(fut);
        let link = &mut self.link;
        self.rt.block_on(poll_fn(|cx| {
            // the first poll queues the request; driving the connection
            // then writes and flushes it
            let _ = fut.as_mut().poll(cx);
            link.drive(cx);
            Poll::Ready(())
        }));
    }

    /// Whether the connection has ended (the server closed it).
    pub fn is_closed(&self) -> bool {
        self.link.ended || self.client.is_closed()
    }

    /// What interrupts the statement running now, from another thread.
    pub fn cancel_token(&self) -> CancelToken {
        self.client.cancel_token()
    }
}

/// A session ends politely: with its client gone the connection tells the
/// server goodbye and closes (waiting at most [`GOODBYE`]).
impl Drop for PgSession {
    fn drop(&mut self) {
        // SAFETY: `client` is taken once, here, and never used again
        drop(unsafe { std::mem::ManuallyDrop::take(&mut self.client) });
        let link = &mut self.link;
        let closed = poll_fn(|cx| {
            link.drive(cx);
            if link.ended {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        });
        // (the timer belongs to the runtime: made inside it)
        let _ = self
            .rt
            .block_on(async { tokio::time::timeout(GOODBYE, closed).await });
    }
}

/// How long a closing session waits for the server to see it go.
const GOODBYE: std::time::Duration = std::time::Duration::from_secs(1);

/// Drives `fut` (a request of `client`) to its end on `rt`, polling the
/// connection meanwhile. Should the connection end first, the request
/// fails with the reason (it would otherwise wait for an answer that
/// cannot come).
fn run_on<T>(
    rt: &tokio::runtime::Runtime,
    link: &mut Link,
    client: &Client,
    fut: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let mut fut = pin!(fut);
    rt.block_on(poll_fn(|cx| {
        link.drive(cx);
        match fut.as_mut().poll(cx) {
            Poll::Ready(Err(e)) => {
                // a FATAL error is the server's last word: it closes the
                // connection after it (an administrator's terminate, a
                // shutdown), perhaps before the socket says so
                if e.is_closed() || e.as_db_error().is_some_and(|d| fatal(d.severity())) {
                    link.ended = true;
                }
                Poll::Ready(Err(e))
            }
            Poll::Ready(out) => Poll::Ready(out),
            Poll::Pending if link.ended => Poll::Ready(Err(match link.failure.take() {
                Some(e) => e,
                None => closed(client),
            })),
            Poll::Pending => Poll::Pending,
        }
    }))
}

/// Whether a server error's severity ends the session (the server then
/// closes the connection).
fn fatal(severity: &str) -> bool {
    matches!(severity, "FATAL" | "PANIC")
}

/// Sends `first` (if any), then `p` (if any), then `b`, then `last` (if
/// any), each behind the one before without waiting (`both` polls its
/// first future first, so requests are queued in that order); errors come
/// in the order sent.
#[allow(clippy::too_many_arguments)]
fn run_behind<T>(
    rt: &tokio::runtime::Runtime,
    link: &mut Link,
    client: &Client,
    first: Option<&str>,
    p: Option<impl Future<Output = Result<Vec<Row>, Error>>>,
    b: impl Future<Output = Result<T, Error>>,
    last: Option<&str>,
) -> Result<(Option<Vec<Row>>, T), Error> {
    let a = async {
        match first {
            Some(f) => client.batch_execute(f).await,
            None => Ok(()),
        }
    };
    let p = async {
        match p {
            Some(p) => p.await.map(Some),
            None => Ok(None),
        }
    };
    let z = async {
        match last {
            Some(l) => client.batch_execute(l).await,
            None => Ok(()),
        }
    };
    run_on(rt, link, client, async {
        let (a, (p, (b, z))) = both(a, both(p, both(b, z))).await;
        a?;
        let p = p?;
        let b = b?;
        z?;
        Ok((p, b))
    })
}

/// The error of a client whose connection has closed: its next request
/// fails as it is queued (the queue is closed), on the first poll.
fn closed(client: &Client) -> Error {
    let mut probe = pin!(client.batch_execute(""));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    match probe.as_mut().poll(&mut cx) {
        Poll::Ready(Err(e)) => e,
        // (not reached: a closed queue refuses at once) an error that
        // says the session cannot be used
        _ => match "host=/ closed=".parse::<tokio_postgres::Config>() {
            Err(e) => e,
            Ok(_) => Error::__private_api_timeout(),
        },
    }
}

impl Link {
    /// Polls the connection: writes queued requests, reads answers and
    /// hands them to their requests. Notices (warnings the server sends)
    /// are dropped. Once it has ended it is not polled again.
    fn drive(&mut self, cx: &mut Context<'_>) {
        while !self.ended {
            match self.conn.poll_message(cx) {
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(Some(Err(e))) => {
                    self.ended = true;
                    self.failure = Some(e);
                }
                Poll::Ready(None) => self.ended = true,
                Poll::Pending => break,
            }
        }
    }
}

/// Both futures to their ends, `a` polled first (so its request is sent
/// first).
async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let mut a = pin!(a);
    let mut b = pin!(b);
    let mut ra = None;
    let mut rb = None;
    poll_fn(|cx| {
        if ra.is_none()
            && let Poll::Ready(v) = a.as_mut().poll(cx)
        {
            ra = Some(v);
        }
        if rb.is_none()
            && let Poll::Ready(v) = b.as_mut().poll(cx)
        {
            rb = Some(v);
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                ra = x;
                rb = y;
                Poll::Pending
            }
        }
    })
    .await
}

//! Serving: the listener (TLS with rustls when a certificate is given),
//! the connection cap, the header and body timeouts, the drain on SIGTERM
//! and the token file read again on SIGHUP.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ticket_issuer_core::error::Error;

use crate::access_log::AccessLog;
use crate::app::router;
use crate::config::{ServiceConfig, ANSWER_WITHIN, LEDGER_WAIT};
use crate::ledgers::NodeLedgers;
use crate::tokens::{read_tokens, TokenSet};

/// How long SIGTERM waits for in-flight requests.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves until SIGTERM or Ctrl-C, then drains in-flight requests (up to
/// ten seconds) and returns; `ready` is told the bound address. Runs its
/// own tokio runtime.
pub fn serve(
    ledgers: NodeLedgers,
    config: &ServiceConfig,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    if config.tls.is_none() && !config.listen.ip().is_loopback() && !config.allow_plain_http {
        return Err(Error::ServiceConfig {
            reason: format!(
                "{} is not a loopback address and no --tls-cert/--tls-key is given; pass them, or --allow-plain-http behind a TLS proxy",
                config.listen
            ),
        });
    }
    if config.player_page && !config.listen.ip().is_loopback() {
        return Err(Error::ServiceConfig {
            reason: format!(
                "--player-page serves a reference page for demonstrations and tests on a loopback address only, and {} is not one; listen on 127.0.0.1 (or ::1), or leave --player-page out (a platform puts its own page behind its own session: docs/API.md §A client that checks what it shows)",
                config.listen
            ),
        });
    }
    if ledgers.several() && (config.witnessing.is_some() || config.top_lots.is_some()) {
        return Err(Error::ServiceConfig {
            reason: "a node with several ledgers (--ledger-routes) takes no --witness and no --alert-top-lots yet: run one node per ledger for those (docs/REDEMPTION.md §Several ledgers)".into(),
        });
    }
    // A PostgreSQL connection closes with a blocking call, which panics
    // inside the runtime: these handles on the pools outlive the runtime,
    // so the connections close after it (SIGTERM had aborted a PostgreSQL
    // node).
    let kept: Vec<_> = ledgers.redeemers().map(|r| r.ledger().clone()).collect();
    let access_log = config
        .access_log
        .as_deref()
        .map(AccessLog::open)
        .transpose()?;
    let runtime = runtime()?;
    // The router starts its background tasks (the top-lots watch) on it.
    let entered = runtime.enter();
    let tokens: TokenSet = Arc::new(std::sync::RwLock::new(config.tokens.clone()));
    let app = router(
        ledgers.map(|r| {
            r.with_busy_timeout(LEDGER_WAIT)
                .with_answer_deadline(ANSWER_WITHIN)
        }),
        Arc::clone(&tokens),
        access_log,
        config,
    );
    drop(entered);
    let served = runtime.block_on(async move {
        let (listener, bound) = bind(config.listen)?;
        let handle = axum_server::Handle::new();
        tokio::spawn(shutdown_on_signal(handle.clone()));
        if let Some(path) = config.token_file.clone() {
            tokio::spawn(reload_tokens_on_hangup(tokens, path));
        }
        ready(bound);
        let permits = Arc::new(tokio::sync::Semaphore::new(config.limits.max_connections));
        let headers = Duration::from_secs(config.limits.header_seconds);
        let served = match &config.tls {
            Some((cert, key)) => {
                let tls = axum_server::tls_rustls::RustlsConfig::from_pem_file(cert, key)
                    .await
                    .map_err(|e| Error::BadFile {
                        path: cert.clone(),
                        reason: format!("the TLS certificate or key does not load: {e}"),
                    })?;
                let server = axum_server::from_tcp_rustls(listener, tls)
                    .map_err(|e| Error::io(cert, e))?
                    .map(|tls| tls.handshake_timeout(headers).acceptor(capped(permits)));
                bounded(server, headers, handle)
                    .serve(app.into_make_service())
                    .await
            }
            None => {
                let server = axum_server::from_tcp(listener)
                    .map_err(|e| Error::io(Path::new(&bound.to_string()), e))?
                    .acceptor(capped(permits));
                bounded(server, headers, handle)
                    .serve(app.into_make_service())
                    .await
            }
        };
        served.map_err(|e| Error::io(Path::new(&bound.to_string()), e))
    });
    // Blocking tasks end within ANSWER_WITHIN (their writes are answered,
    // or unknown, by then); a ledger that stopped answering keeps nothing
    // of ours waiting past it.
    runtime.shutdown_timeout(ANSWER_WITHIN);
    drop(kept);
    served
}

/// The multi-threaded tokio runtime a server runs on.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal {
            what: format!("the async runtime does not start: {e}"),
        })
}

/// A non-blocking listener on `listen` (inside the runtime), and the
/// address it is bound to.
pub(crate) fn bind(listen: SocketAddr) -> Result<(std::net::TcpListener, SocketAddr), Error> {
    let place = listen.to_string();
    let listener =
        std::net::TcpListener::bind(listen).map_err(|e| Error::io(Path::new(&place), e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::io(Path::new(&place), e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Error::io(Path::new(&place), e))?;
    Ok((listener, bound))
}

/// An acceptor that holds a connection slot for each connection it lets
/// through; with none free it closes the connection at once, before any
/// byte is read (so a flood of idle sockets cannot take every descriptor).
#[derive(Clone)]
pub(crate) struct Capped<A> {
    inner: A,
    permits: Arc<tokio::sync::Semaphore>,
}

impl<A, I, S> axum_server::accept::Accept<I, S> for Capped<A>
where
    A: axum_server::accept::Accept<I, S>,
    A::Future: Send + 'static,
    A::Stream: Unpin + Send + 'static,
    A::Service: Send + 'static,
{
    type Stream = Held<A::Stream>;
    type Service = A::Service;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<(Self::Stream, A::Service)>> + Send>,
    >;

    fn accept(&self, stream: I, service: S) -> Self::Future {
        let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() else {
            drop(stream);
            return Box::pin(std::future::ready(Err(std::io::Error::other(
                "connection cap reached (--max-connections): closed",
            ))));
        };
        let accepted = self.inner.accept(stream, service);
        Box::pin(async move {
            let (stream, service) = accepted.await?;
            Ok((
                Held {
                    stream,
                    _slot: permit,
                },
                service,
            ))
        })
    }
}

/// The connection cap on the raw TCP stream (under TLS, if any).
pub(crate) fn capped(
    permits: Arc<tokio::sync::Semaphore>,
) -> Capped<axum_server::accept::DefaultAcceptor> {
    Capped {
        inner: axum_server::accept::DefaultAcceptor,
        permits,
    }
}

/// `server` with the header timeouts (the first request's and each
/// next one's) and the shutdown handle, plain or TLS alike.
pub(crate) fn bounded<Acc>(
    server: axum_server::Server<SocketAddr, Acc>,
    headers: Duration,
    handle: axum_server::Handle<SocketAddr>,
) -> axum_server::Server<SocketAddr, Acc> {
    let mut server = server.first_request_timeout(headers).handle(handle);
    server.http_builder().http1().header_read_timeout(headers);
    server
}

/// A connection with its slot, given back when it closes.
pub(crate) struct Held<T> {
    stream: T,
    _slot: tokio::sync::OwnedSemaphorePermit,
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Held<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Held<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Reads the token file again on each SIGHUP; a file that does not read
/// keeps the tokens in force (and says why on standard error).
async fn reload_tokens_on_hangup(tokens: TokenSet, path: PathBuf) {
    let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
    else {
        return;
    };
    while hangups.recv().await.is_some() {
        match read_tokens(&path) {
            Ok(new) => {
                let names: Vec<String> = new.iter().map(|t| t.name.clone()).collect();
                *tokens.write().unwrap_or_else(|p| p.into_inner()) = new;
                eprintln!(
                    "serve: SIGHUP: {} token(s) now accepted from {}: {}",
                    names.len(),
                    path.display(),
                    names.join(", ")
                );
            }
            Err(e) => eprintln!("serve: SIGHUP: the tokens in force stay: {e}"),
        }
    }
}

/// Waits for SIGTERM or Ctrl-C, then stops accepting and drains.
pub(crate) async fn shutdown_on_signal(handle: axum_server::Handle<SocketAddr>) {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    handle.graceful_shutdown(Some(DRAIN));
}

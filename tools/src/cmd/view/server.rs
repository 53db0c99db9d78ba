//! The viewer's HTTP server: loopback only, fixed routes, bounded.
//!
//! One thread accepts; [`WORKERS`] threads serve the connections it hands
//! them through a queue of [`QUEUE`] (a connection past that gets a 503 at
//! once). A request's head is read into [`MAX_HEAD`] bytes and parsed by
//! `httparse`; a longer head, a URL over [`MAX_URL`] bytes, a body, a method
//! other than GET or HEAD, or a stalled client (no byte for [`IDLE`]) ends
//! with a 4xx (or a close) and the server goes on. A connection serves at
//! most [`REQUESTS_PER_CONNECTION`] requests. No request path reaches the
//! file system: the assets are compiled in, the API reads the one opened
//! file's session.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::session::{query, Session, Step};

/// Threads serving connections: more than the connections a browser opens
/// to one host (6), so that the page's own never wait for a worker.
pub const WORKERS: usize = 8;
/// Connections waiting for a worker.
pub const QUEUE: usize = 32;
/// Bytes of a request's line and headers.
pub const MAX_HEAD: usize = 8 * 1024;
/// Bytes of a request's URL.
pub const MAX_URL: usize = 1024;
/// Silence between two requests after which a connection is closed (it
/// holds a worker meanwhile).
pub const IDLE: Duration = Duration::from_secs(2);
/// Longest a request's head may take to arrive once begun (a client
/// sending a byte now and then holds a worker no longer).
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// Requests one connection may make (keep-alive), then it is closed.
pub const REQUESTS_PER_CONNECTION: usize = 10_000;
/// Longest step of the playhead one request may ask for, in seconds, and
/// the fastest rate.
pub const MAX_DT: f64 = 10.0;
pub const MAX_RATE: f64 = 64.0;
/// Most poses one request may ask the player for (`count`): the page asks
/// for a few frames ahead at once, so that a round trip through the
/// browser's network stack is paid once per several frames, not per frame.
pub const MAX_POSES: usize = 32;

/// The page and its scripts, compiled in.
const INDEX_HTML: &str = include_str!("../../../viewer/index.html");
const VIEWER_JS: &str = include_str!("../../../viewer/viewer.js");
const THREE_JS: &str = include_str!("../../../viewer/vendor/three.module.min.js");
const ORBIT_JS: &str = include_str!("../../../viewer/vendor/OrbitControls.js");

/// One answer.
struct Response {
    status: u16,
    kind: &'static str,
    body: Vec<u8>,
}

impl Response {
    fn ok(kind: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status: 200,
            kind,
            body: body.into(),
        }
    }

    fn json(value: &serde_json::Value) -> Response {
        Response::ok("application/json", value.to_string())
    }

    fn error(status: u16, message: impl Into<String>) -> Response {
        Response {
            status,
            kind: "text/plain; charset=utf-8",
            body: (message.into() + "\n").into_bytes(),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Serves `session` on `listener` until `stop` is set; returns once every
/// worker has ended.
/// To stop it, set `stop` and connect once to the listener's address (see
/// [`wake`]): `accept` blocks.
pub fn serve(listener: TcpListener, session: Session, stop: Arc<AtomicBool>) -> anyhow::Result<()> {
    let session = Arc::new(Mutex::new(session));
    let (send, receive) = sync_channel::<TcpStream>(QUEUE);
    let receive = Arc::new(Mutex::new(receive));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let receive = Arc::clone(&receive);
            let session = Arc::clone(&session);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || work(&receive, &session, &stop))
        })
        .collect();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok(_) if stop.load(Ordering::Relaxed) => break,
            Ok((stream, _)) => match send.try_send(stream) {
                Ok(()) => {}
                Err(TrySendError::Full(mut stream)) => {
                    let _ = write_response(
                        &mut stream,
                        &Response::error(503, "busy: too many connections"),
                        false,
                        true,
                    );
                }
                Err(TrySendError::Disconnected(_)) => break,
            },
            // Out of descriptors, say: a pause, not a spin.
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    drop(send);
    for worker in workers {
        let _ = worker.join();
    }
    Ok(())
}

fn work(receive: &Mutex<Receiver<TcpStream>>, session: &Mutex<Session>, stop: &AtomicBool) {
    loop {
        let next = match receive.lock() {
            Ok(r) => r.recv_timeout(Duration::from_millis(50)),
            Err(_) => return,
        };
        match next {
            Ok(stream) => connection(stream, session, stop),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Serves one connection's requests, one after the other.
fn connection(mut stream: TcpStream, session: &Mutex<Session>, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(IDLE));
    let _ = stream.set_write_timeout(Some(IDLE));
    let _ = stream.set_nodelay(true);
    let mut buffer = vec![0u8; MAX_HEAD];
    let mut filled = 0;
    for _ in 0..REQUESTS_PER_CONNECTION {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let (response, head, keep, used) = match read_request(&mut stream, &mut buffer, &mut filled)
        {
            Ok(Some(request)) => {
                let response = respond(&request, session);
                (response, request.head, request.keep_alive, request.len)
            }
            Ok(None) => return,
            Err(response) => {
                let _ = write_response(&mut stream, &response, false, false);
                return;
            }
        };
        if write_response(&mut stream, &response, head, keep).is_err() || !keep {
            return;
        }
        // What the client sent after this request stays for the next one.
        buffer.copy_within(used..filled, 0);
        filled -= used;
    }
}

/// A parsed request.
struct Request {
    path: String,
    head: bool,
    keep_alive: bool,
    /// Bytes of its head in the buffer.
    len: usize,
}

/// Reads one request's head; `Ok(None)` when the client closed or went
/// quiet between requests, `Err` the answer to a bad one.
fn read_request(
    stream: &mut TcpStream,
    buffer: &mut [u8],
    filled: &mut usize,
) -> Result<Option<Request>, Response> {
    let begun = std::time::Instant::now();
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(&buffer[..*filled]) {
            Ok(httparse::Status::Complete(len)) => {
                let method = parsed.method.unwrap_or("");
                let path = parsed.path.unwrap_or("");
                if path.len() > MAX_URL {
                    return Err(Response::error(414, format!("URL over {MAX_URL} bytes")));
                }
                if method != "GET" && method != "HEAD" {
                    return Err(Response::error(405, "only GET and HEAD"));
                }
                let header = |name: &str| {
                    parsed
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
                };
                if header("transfer-encoding").is_some()
                    || header("content-length").is_some_and(|n| n != "0")
                {
                    return Err(Response::error(413, "requests carry no body"));
                }
                let keep_alive = match header("connection").as_deref() {
                    Some("close") => false,
                    Some("keep-alive") => true,
                    _ => parsed.version == Some(1),
                };
                return Ok(Some(Request {
                    path: path.to_string(),
                    head: method == "HEAD",
                    keep_alive,
                    len,
                }));
            }
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => {
                return Err(Response::error(431, "more than 32 headers"))
            }
            Err(e) => return Err(Response::error(400, format!("not an HTTP request: {e}"))),
        }
        if *filled == buffer.len() {
            return Err(Response::error(
                431,
                format!("request line and headers over {MAX_HEAD} bytes"),
            ));
        }
        let left = HEAD_DEADLINE.saturating_sub(begun.elapsed());
        if left.is_zero() {
            return Err(Response::error(408, "request head too slow"));
        }
        let _ = stream.set_read_timeout(Some(left.min(IDLE)));
        match stream.read(&mut buffer[*filled..]) {
            Ok(0) => return Ok(None),
            Ok(n) => *filled += n,
            Err(_) if *filled == 0 => return Ok(None),
            Err(_) => return Err(Response::error(400, "request cut short")),
        }
    }
}

fn write_response(
    stream: &mut TcpStream,
    response: &Response,
    head: bool,
    keep: bool,
) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: {}\r\n\r\n",
        response.status,
        reason(response.status),
        response.kind,
        response.body.len(),
        if keep { "keep-alive" } else { "close" }
    )
    .into_bytes();
    if !head {
        out.extend_from_slice(&response.body);
    }
    stream.write_all(&out)?;
    stream.flush()
}

/// A finite number from the query, or a 400 naming the parameter.
fn number(
    params: &std::collections::BTreeMap<&str, &str>,
    name: &str,
    range: std::ops::RangeInclusive<f64>,
) -> Result<f64, Response> {
    let text = params
        .get(name)
        .ok_or_else(|| Response::error(400, format!("missing parameter {name}")))?;
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && range.contains(&v) => Ok(v),
        _ => Err(Response::error(
            400,
            format!(
                "parameter {name} must be a number in [{}, {}]",
                range.start(),
                range.end()
            ),
        )),
    }
}

/// The answer to `request`: a route, or 404.
fn respond(request: &Request, session: &Mutex<Session>) -> Response {
    match route(request, session) {
        Ok(r) | Err(r) => r,
    }
}

fn route(request: &Request, session: &Mutex<Session>) -> Result<Response, Response> {
    let path = request.path.split('?').next().unwrap_or("");
    let params = query(&request.path);
    let lock = || {
        session
            .lock()
            .map_err(|_| Response::error(500, "the session failed earlier"))
    };
    let failed = |e: cinestream::Error| Response::error(500, e.to_string());
    Ok(match path {
        "/" | "/index.html" => Response::ok("text/html; charset=utf-8", INDEX_HTML),
        "/viewer.js" => Response::ok("text/javascript; charset=utf-8", VIEWER_JS),
        "/vendor/three.module.min.js" => Response::ok("text/javascript; charset=utf-8", THREE_JS),
        "/vendor/OrbitControls.js" => Response::ok("text/javascript; charset=utf-8", ORBIT_JS),
        "/favicon.ico" => Response::ok("image/x-icon", Vec::new()),
        "/api/meta" => Response::json(&lock()?.meta_json()),
        "/api/pose" => {
            let step = match params.contains_key("seek") {
                true => Step::Seek(number(&params, "seek", -1e9..=1e9)?),
                false => Step::Advance {
                    dt: number(&params, "dt", -MAX_DT..=MAX_DT)?,
                    rate: number(&params, "rate", -MAX_RATE..=MAX_RATE)?,
                },
            };
            // Several steps of `dt`, one pose after the other in the answer.
            let count = match (params.contains_key("count"), step) {
                (false, _) => 1.0,
                (true, Step::Advance { .. }) => number(&params, "count", 1.0..=MAX_POSES as f64)?,
                (true, Step::Seek(_)) => {
                    return Err(Response::error(400, "count goes with dt, not seek"))
                }
            };
            if count.fract() != 0.0 {
                return Err(Response::error(
                    400,
                    "parameter count must be a whole number",
                ));
            }
            let mut session = lock()?;
            let mut bytes = Vec::new();
            for _ in 0..count as usize {
                bytes.extend_from_slice(&session.pose(step).map_err(failed)?);
            }
            Response::ok("application/octet-stream", bytes)
        }
        "/api/loop" => {
            let wrap = match params.get("mode").copied() {
                Some("wrap") => true,
                Some("clamp") => false,
                _ => return Err(Response::error(400, "mode must be wrap or clamp")),
            };
            lock()?.set_loop(wrap).map_err(failed)?;
            Response::ok("text/plain", "ok\n")
        }
        "/api/residency" => Response::json(&lock()?.residency_json()),
        "/api/against" => {
            let time = number(&params, "t", -1e9..=1e9)?;
            match lock()?.against_at(time) {
                Some(bytes) => Response::ok("application/octet-stream", bytes.map_err(failed)?),
                None => Response::error(404, "no sources: start the viewer with --against"),
            }
        }
        "/api/allowed" => {
            let time = number(&params, "t", -1e9..=1e9)?;
            match lock()?.allowed_at(time) {
                Some(allowed) => Response::json(&allowed),
                None => Response::error(
                    404,
                    "no allowed errors: the file was not packed to a screen-space bound, or no \
                     sources with its camera were given (--against)",
                ),
            }
        }
        "/api/error-curve" => match lock()?.error_curve_json() {
            Some(curve) => Response::json(&curve),
            None => Response::error(404, "no sources: start the viewer with --against"),
        },
        "/api/float-curves" => Response::json(&lock()?.float_curves_json().map_err(failed)?),
        _ => Response::error(404, "no such page"),
    })
}

/// Ends a blocked `accept` of the server on `address` once `stop` is set.
pub fn wake(address: SocketAddr) {
    let _ = TcpStream::connect_timeout(&address, Duration::from_secs(1));
}

/// Binds `127.0.0.1:port` (a free port for 0).
pub fn bind(port: u16) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| anyhow::anyhow!("binding 127.0.0.1:{port}: {e}"))?;
    let address = listener.local_addr()?;
    Ok((listener, address))
}

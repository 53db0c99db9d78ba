//! `cinestream view`'s HTTP API without a browser: what each route
//! answers (the pose checked against the library's own sampling of the
//! file), and hostile requests (long URLs, huge heads, bodies, paths that
//! climb out, bad numbers, garbage, a flood of connections), each answered
//! with a 4xx or a close while the server goes on; Ctrl-C stops it with
//! status 0. The browser side is `.ci/viewer_test.mjs`.

#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cinestream::container::StreamReader;
use cinestream::{Sampling, Transform};

/// A viewer serving, stopped (SIGINT) when dropped.
struct Viewer {
    child: Child,
    address: String,
}

impl Viewer {
    fn start(args: &[&str], dir: &Path) -> Viewer {
        let mut full = vec!["view"];
        full.extend_from_slice(args);
        Viewer::run(&full, dir)
    }

    /// `cinestream args...`, which serves the viewer.
    fn run(args: &[&str], dir: &Path) -> Viewer {
        Viewer::run_with(
            Command::new(env!("CARGO_BIN_EXE_cinestream")).args(args),
            dir,
        )
    }

    /// `command`, which serves the viewer.
    fn run_with(command: &mut Command, dir: &Path) -> Viewer {
        let mut child = command
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting cinestream view");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let address = loop {
            let line = lines
                .next()
                .expect("the viewer printed its address before ending")
                .expect("reading stdout");
            if let Some(rest) = line.split("serving on http://").nth(1) {
                break rest.split('/').next().expect("host:port").to_string();
            }
        };
        // The rest of stdout ("stopped") is read by `stop`.
        std::thread::spawn(move || lines.for_each(drop));
        Viewer { child, address }
    }

    fn get(&self, path: &str) -> (u16, Vec<u8>) {
        self.raw(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
    }

    /// Sends `request` as is and reads the answer until the server closes.
    fn raw(&self, request: &[u8]) -> (u16, Vec<u8>) {
        let mut stream = TcpStream::connect(&self.address).expect("connecting");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        // The server may answer and close before it has read everything.
        let _ = stream.write_all(request);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        parse(&answer)
    }

    /// SIGINT, as Ctrl-C sends; the exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        let pid = i32::try_from(self.child.id()).expect("pid");
        // SAFETY: `kill` sends a signal to our own child, by its id; it
        // touches no memory of this process.
        let sent = unsafe { libc::kill(pid, libc::SIGINT) };
        assert_eq!(sent, 0, "sending SIGINT");
        let status = self.child.wait().expect("waiting for the viewer");
        std::mem::forget(self);
        status
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Status and body of an HTTP answer.
fn parse(answer: &[u8]) -> (u16, Vec<u8>) {
    let text = String::from_utf8_lossy(answer);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(Vec::new(), |at| answer[at + 4..].to_vec());
    (status, body)
}

fn json(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body).expect("a JSON answer")
}

/// A binary pose: time, flags, bones, float values, and the floats.
fn pose(body: &[u8]) -> (f64, u32, Vec<f32>) {
    let time = f64::from_le_bytes(body[0..8].try_into().expect("8 bytes"));
    let word = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().expect("4 bytes"));
    let (flags, bones) = (word(8), word(12) as usize);
    let floats = body[24..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect::<Vec<_>>();
    assert_eq!(floats.len(), bones * 10 + word(16) as usize);
    (time, flags, floats)
}

fn as_floats(pose: &[Transform]) -> Vec<f32> {
    pose.iter()
        .flat_map(|t| {
            let r = t.rotation;
            [r.x, r.y, r.z, r.w]
                .into_iter()
                .chain(t.translation.to_array())
                .chain(t.scale.to_array())
        })
        .collect()
}

#[test]
fn routes_answer_the_files_poses_and_state() {
    let dir = common::packed_walk("view-api", &[]);
    let viewer = Viewer::start(&["walk.cine", "--against", "walk.bvh"], &dir);
    assert!(
        viewer.address.starts_with("127.0.0.1:"),
        "{}",
        viewer.address
    );

    let (status, body) = viewer.get("/");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("/viewer.js"));
    for asset in [
        "/viewer.js",
        "/vendor/three.module.min.js",
        "/vendor/OrbitControls.js",
    ] {
        let (status, body) = viewer.get(asset);
        assert_eq!(status, 200, "{asset}");
        assert!(!body.is_empty(), "{asset}");
    }

    let (status, body) = viewer.get("/api/meta");
    assert_eq!(status, 200);
    let meta = json(&body);
    assert_eq!(meta["bones"], serde_json::json!(["hips", "leg"]));
    assert_eq!(meta["parents"], serde_json::json!([-1, 0]));
    assert_eq!(meta["samples"], 4);
    assert_eq!(meta["against"], true);
    assert!(meta["pages"].as_array().is_some_and(|p| !p.is_empty()));
    assert!(meta["inspect"]["sizes"]["file_bytes"].as_u64().is_some());

    // The pose at a time between samples is the library's, from its own
    // reader of the same file.
    let reader = StreamReader::open_file(&dir.join("walk.cine")).expect("opening walk.cine");
    for time in [0.0, 0.05, 0.0712, 0.1] {
        let (status, body) = viewer.get(&format!("/api/pose?seek={time}"));
        assert_eq!(status, 200);
        let (at, flags, floats) = pose(&body);
        assert_eq!(at, time);
        assert_eq!(flags & 1, 1, "ready");
        let mut expected = vec![Transform::IDENTITY; 2];
        reader.sample(time, &mut expected).expect("sampling");
        assert_eq!(floats, as_floats(&expected), "pose at {time}");
    }
    // Playing on: the player's time moves by dt times the rate.
    viewer.get("/api/pose?seek=0");
    let (_, body) = viewer.get("/api/pose?dt=0.02&rate=-0.5");
    assert_eq!(pose(&body).0, 0.0, "clamped at the start");
    let (_, body) = viewer.get("/api/pose?dt=0.02&rate=2");
    assert!((pose(&body).0 - 0.04).abs() < 1e-12);
    // Several frames ahead in one answer: the player steps `count` times,
    // each pose the one a request of its own would have answered.
    viewer.get("/api/pose?seek=0.01");
    let (status, body) = viewer.get("/api/pose?dt=0.02&rate=1&count=3");
    assert_eq!(status, 200);
    let one = body.len() / 3;
    assert_eq!(body.len(), 3 * one, "three poses of one size");
    for (k, answer) in body.chunks_exact(one).enumerate() {
        let (at, flags, floats) = pose(answer);
        let time = 0.01 + 0.02 * (k + 1) as f64;
        assert!((at - time).abs() < 1e-12, "pose {k} at {at}, not {time}");
        assert_eq!(flags & 1, 1, "ready");
        let mut expected = vec![Transform::IDENTITY; 2];
        reader.sample(at, &mut expected).expect("sampling");
        assert_eq!(floats, as_floats(&expected), "pose {k} at {at}");
    }

    let (status, body) = viewer.get("/api/residency");
    assert_eq!(status, 200);
    let residency = json(&body);
    assert_eq!(residency["pages"].as_str().map(str::len), Some(1));
    assert_eq!(residency["pages"], "r");
    assert_eq!(residency["budget_bytes"], 64 << 20);

    let (status, body) = viewer.get("/api/against?t=0.034");
    assert_eq!(status, 200);
    let (at, sample, floats) = pose(&body);
    assert_eq!((at, sample), (1.0 / 30.0, 1), "the nearest sample");
    assert_eq!(
        floats.len(),
        2 * 10 + 2,
        "source pose and each bone's error"
    );
    let errors = &floats[20..];
    assert!(errors.iter().all(|e| (0.0..0.01).contains(e)), "{errors:?}");

    let (status, body) = viewer.get("/api/error-curve");
    assert_eq!(status, 200);
    let curve = json(&body);
    assert_eq!(curve["points"].as_array().map(Vec::len), Some(4));
    assert_eq!(curve["threshold_cm"], 0.01);

    let (status, body) = viewer.get("/api/float-curves");
    assert_eq!(status, 200);
    assert_eq!(json(&body)["times"], serde_json::json!([]));

    let status = viewer.stop();
    assert!(status.success(), "Ctrl-C: {status:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hostile_requests_get_4xx_and_the_server_goes_on() {
    let dir = common::packed_walk("view-hostile", &[]);
    let viewer = Viewer::start(&["walk.cine"], &dir);
    let alive = |viewer: &Viewer| assert_eq!(viewer.get("/api/meta").0, 200, "still serving");

    let long = format!("/api/pose?seek=0&pad={}", "a".repeat(2000));
    assert_eq!(viewer.get(&long).0, 414);
    alive(&viewer);

    let mut huge = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..400 {
        huge.extend_from_slice(format!("X-Filler-{i}: {}\r\n", "b".repeat(40)).as_bytes());
    }
    huge.extend_from_slice(b"\r\n");
    let status = viewer.raw(&huge).0;
    assert!(status == 431 || status == 0, "huge head: {status}");
    let endless = vec![b'A'; 64 * 1024];
    let status = viewer.raw(&endless).0;
    assert!((400..500).contains(&status) || status == 0, "{status}");
    alive(&viewer);

    let post = b"POST /api/pose HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    assert_eq!(viewer.raw(post).0, 405);
    let body = b"GET /api/meta HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    assert_eq!(viewer.raw(body).0, 413);
    let chunked = b"GET /api/meta HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_eq!(viewer.raw(chunked).0, 413);
    assert_eq!(viewer.raw(b"\x00\x01\x02garbage\r\n\r\n").0, 400);
    alive(&viewer);

    for path in [
        "/../Cargo.toml",
        "/vendor/../../walk.cine",
        "/%2e%2e/walk.cine",
        "/walk.cine",
        "/vendor/",
        "//etc/passwd",
        "/api/meta/../../walk.bvh",
    ] {
        assert_eq!(viewer.get(path).0, 404, "{path}");
    }
    for query in [
        "/api/pose",
        "/api/pose?seek=NaN",
        "/api/pose?seek=inf",
        "/api/pose?seek=abc",
        "/api/pose?seek=1e300",
        "/api/pose?dt=1e9&rate=1",
        "/api/pose?dt=0.1&rate=1e9",
        "/api/pose?dt=0.1",
        "/api/pose?dt=0.1&rate=1&count=0",
        "/api/pose?dt=0.1&rate=1&count=33",
        "/api/pose?dt=0.1&rate=1&count=2.5",
        "/api/pose?dt=0.1&rate=1&count=1e9",
        "/api/pose?seek=0&count=2",
        "/api/loop?mode=sideways",
        "/api/against?t=1",
    ] {
        let (status, body) = viewer.get(query);
        assert!((400..500).contains(&status), "{query}: {status}");
        assert!(!body.is_empty(), "{query}: says why");
    }
    assert_eq!(viewer.get("/api/error-curve").0, 404, "no sources");
    alive(&viewer);

    // A client that starts a request and goes quiet, and a flood of
    // connections: the server answers the next request all the same.
    let mut quiet = TcpStream::connect(&viewer.address).expect("connecting");
    quiet.write_all(b"GET /api/me").expect("writing");
    let flood: Vec<TcpStream> = (0..64)
        .filter_map(|_| TcpStream::connect(&viewer.address).ok())
        .collect();
    drop(flood);
    drop(quiet);
    // Connections past the queue were told 503; once the closed ones are
    // gone the server answers again (bounded: a hang fails the test).
    let recovered = (0..200).any(|_| {
        let status = viewer.get("/api/meta").0;
        if status != 200 {
            assert_eq!(status, 503, "busy, not broken");
            std::thread::sleep(Duration::from_millis(50));
        }
        status == 200
    });
    assert!(recovered, "the server answers again after the flood");

    let status = viewer.stop();
    assert!(status.success(), "Ctrl-C: {status:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_source_clip_is_packed_in_memory_and_compared() {
    let dir = common::temp_dir("view-source", "walk");
    std::fs::write(dir.join("walk.bvh"), common::WALK).expect("writing walk.bvh");
    let viewer = Viewer::start(&["walk.bvh"], &dir);
    let meta = json(&viewer.get("/api/meta").1);
    assert_eq!(meta["against"], true);
    assert_eq!(meta["samples"], 4);
    assert!(
        meta["preview"]["bound_cm"].as_f64().is_some(),
        "a preview tier, as pack writes"
    );
    assert_eq!(viewer.get("/api/error-curve").0, 200);
    assert!(viewer.stop().success());
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("listing")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["walk.bvh"], "nothing written beside the source");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_packed_without_its_skeleton_is_viewed_with_it() {
    let dir = common::packed_walk("view-skeleton", &[]);
    let out = common::cinestream(
        &[
            "pack",
            "walk.bvh",
            "-o",
            "lean.cine",
            "--skeleton-by-reference",
        ],
        &dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::cinestream(&["view", "lean.cine"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--skeleton"),
        "{stderr}"
    );
    let viewer = Viewer::start(&["lean.cine", "--skeleton", "walk.cine"], &dir);
    let meta = json(&viewer.get("/api/meta").1);
    assert_eq!(meta["bones"], serde_json::json!(["hips", "leg"]));
    let reader = StreamReader::open_file(&dir.join("walk.cine")).expect("opening walk.cine");
    for time in [0.0, 0.0712] {
        let (_, body) = viewer.get(&format!("/api/pose?seek={time}"));
        let mut expected = vec![Transform::IDENTITY; 2];
        reader.sample(time, &mut expected).expect("sampling");
        assert_eq!(pose(&body).2, as_floats(&expected), "pose at {time}");
    }
    assert!(viewer.stop().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_settings_are_refused_before_serving() {
    let dir = common::packed_walk("view-settings", &["--preview-cm", "0"]);
    for (args, expected) in [
        (vec!["walk.cine", "--budget-mib", "0"], "--budget-mib"),
        (vec!["walk.cine", "--throttle-mbps=-1"], "--throttle-mbps"),
        (vec!["missing.cine"], "missing.cine"),
        (vec!["walk.bvh", "--against", "walk.bvh"], "--against"),
        (
            vec!["walk.cine", "--missing-page", "preview"],
            "preview tier",
        ),
    ] {
        let mut full = vec!["view"];
        full.extend(&args);
        let out = common::cinestream(&full, &dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_view_serves_the_cinematic_with_its_camera() {
    let dir = common::temp_dir("view-demo", "cinematic");
    let viewer = Viewer::run(&["demo", "--view", "--seconds", "2", "--actors", "2"], &dir);
    let meta = json(&viewer.get("/api/meta").1);
    assert_eq!(meta["against"], true, "compared with the procedural source");
    assert_eq!(
        meta["actors"].as_array().map(Vec::len),
        Some(2),
        "{}",
        meta["actors"]
    );
    let camera = &meta["camera"];
    let bone = camera["bone"].as_u64().expect("a camera bone") as usize;
    assert_eq!(meta["bones"][bone], "Camera");
    let fov = camera["fov_value"].as_u64().expect("its field of view") as usize;
    // The field of view the pose carries is a real one, in radians.
    let (_, _, floats) = pose(&viewer.get("/api/pose?seek=1").1);
    let bones = meta["bones"].as_array().map_or(0, Vec::len);
    let yfov = floats[bones * 10 + fov];
    assert!((0.1..3.0).contains(&yfov), "{yfov}");
    let curves = json(&viewer.get("/api/float-curves").1);
    assert!(curves["times"].as_array().is_some_and(|t| t.len() > 10));
    assert!(viewer.stop().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn open_runs_the_desktops_opener_with_the_address_and_nothing_else() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::packed_walk("view-open", &[]);
    // An `xdg-open` first on PATH that writes down what it was given.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("creating bin/");
    let opener = bin.join("xdg-open");
    let record = dir.join("opened.txt");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{}'\n",
            record.display()
        ),
    )
    .expect("writing the opener");
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let exe = env!("CARGO_BIN_EXE_cinestream");

    // Without --open nothing is run.
    let viewer = Viewer::run_with(
        Command::new(exe)
            .args(["view", "walk.cine"])
            .env("PATH", &path),
        &dir,
    );
    assert_eq!(viewer.get("/api/meta").0, 200);
    assert!(viewer.stop().success());
    assert!(!record.exists(), "the opener ran without --open");

    // With it, the opener gets the page's address, once, as its only argument.
    let viewer = Viewer::run_with(
        Command::new(exe)
            .args(["view", "walk.cine", "--open"])
            .env("PATH", &path),
        &dir,
    );
    let address = format!("http://{}/", viewer.address);
    let opened = (0..200).find_map(|_| {
        let text = std::fs::read_to_string(&record).unwrap_or_default();
        if text.ends_with('\n') {
            return Some(text);
        }
        std::thread::sleep(Duration::from_millis(25));
        None
    });
    assert_eq!(opened.as_deref(), Some(format!("{address}\n").as_str()));
    assert!(viewer.stop().success());

    let _ = std::fs::remove_dir_all(&dir);
}

/// A file packed to a screen-space bound: the page gets each bone's allowed
/// error beside its measured one, every bone within its own, the camera's
/// held to the threshold; a strict file has none to give.
#[test]
fn a_shot_aware_file_shows_each_bones_allowed_error() {
    let dir = common::temp_dir("view-api", "screen");
    let dir = dir.path();
    let out = common::cinestream(
        &[
            "pack",
            "procedural:2:3",
            "--screen-px",
            "0.5",
            "--preview-cm",
            "0",
            "-o",
            "shot.cine",
        ],
        dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let viewer = Viewer::start(&["shot.cine", "--against", "procedural:2:3"], dir);
    let (status, body) = viewer.get("/api/meta");
    assert_eq!(status, 200);
    let meta = json(&body);
    assert_eq!(meta["screen"]["pixels"], 0.5, "{}", meta["screen"]);
    assert_eq!(meta["screen"]["allowed"], true);
    let bones = meta["bones"].as_array().unwrap().len();
    let camera = meta["bones"]
        .as_array()
        .unwrap()
        .iter()
        .position(|b| b == "Camera")
        .unwrap();
    let mut looser = 0;
    for t in ["0", "0.5", "1.7", "2.9"] {
        let (status, body) = viewer.get(&format!("/api/allowed?t={t}"));
        assert_eq!(status, 200, "{t}");
        let allowed: Vec<f64> = json(&body)["allowed_cm"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(allowed.len(), bones);
        let (status, body) = viewer.get(&format!("/api/against?t={t}"));
        assert_eq!(status, 200);
        let (_, _, floats) = pose(&body);
        let errors = &floats[bones * 10..];
        for (b, (&e, &a)) in errors.iter().zip(&allowed).enumerate() {
            assert!(
                a <= 1.0 + 1e-9,
                "bone {b} at {t}: allowed {a} over the ceiling"
            );
            if b == camera {
                assert!(a <= 0.01, "the camera at {t}: allowed {a}");
                continue;
            }
            assert!(
                a >= 0.0099,
                "bone {b} at {t}: allowed {a} under the threshold"
            );
            assert!(
                f64::from(e) <= a * (1.0 + 1e-5),
                "bone {b} at {t}: error {e} over its allowed {a}"
            );
            looser += usize::from(a > 0.02);
        }
    }
    assert!(looser > 0, "some bone is allowed more than the threshold");
    drop(viewer);

    // A strict file has no allowed errors to give.
    let out = common::cinestream(&["pack", "procedural:1:1", "-o", "strict.cine"], dir);
    assert!(out.status.success());
    let viewer = Viewer::start(&["strict.cine", "--against", "procedural:1:1"], dir);
    let (status, _) = viewer.get("/api/allowed?t=0");
    assert_eq!(status, 404);
    let (_, body) = viewer.get("/api/meta");
    assert!(json(&body)["screen"].is_null());
}

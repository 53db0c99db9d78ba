//! How an engine embeds cinestream: `engine_loop [seconds]` (default 4).
//!
//! - The cutscene is packed to a file once (here from the built-in
//!   procedural cinematic).
//! - The engine's I/O job reads the pages the stream asks for from that
//!   file with its own reads and hands them over (host-driven I/O: no
//!   prefetch thread of cinestream's).
//! - A cutscene component owns its `Player` (no borrow), is moved to the
//!   engine's animation thread, and samples each frame into the engine's
//!   own transform type, its bones mapped by name onto the engine's
//!   skeleton (which orders them its own way and lacks the toes).
//!
//! Prints the frames played, how many waited for a page, the pages the
//! I/O job read, and the engine's right-hand position at the end.
use std::io::{Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cinestream::container::{write_stream, Header, WriteOptions, HEADER_LEN};
use cinestream::play::Player;
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::sample::{map_by_name, PoseWriter, Remap};
use cinestream::stream::{MissingPage, Stream, StreamOptions};
use cinestream::{
    compress::{compress, CompressSettings},
    Sampling,
};
use glam::{Quat, Vec3};

/// The engine's transform, laid out as its renderer wants it.
#[derive(Clone, Copy, Debug, Default)]
struct EngineBone {
    rotation: [f32; 4],
    position: [f32; 3],
    scale: [f32; 3],
}

/// The engine's pose: its own bones, its own order.
struct EnginePose(Vec<EngineBone>);

impl PoseWriter for EnginePose {
    fn rotation(&mut self, bone: usize, q: Quat) {
        self.0[bone].rotation = q.to_array();
    }
    fn translation(&mut self, bone: usize, t: Vec3) {
        self.0[bone].position = t.to_array();
    }
    fn scale(&mut self, bone: usize, s: Vec3) {
        self.0[bone].scale = s.to_array();
    }
}

/// What the engine keeps per cutscene actor: nothing borrowed.
struct CutsceneComponent {
    player: Player,
    pose: EnginePose,
    map: Vec<Option<usize>>,
}

/// The engine's skeleton: the clip's bones in another order, without toes.
const ENGINE_BONES: [&str; 20] = [
    "Hips",
    "Spine",
    "Chest",
    "Neck",
    "Head",
    "UpperLeg_L",
    "LowerLeg_L",
    "Foot_L",
    "UpperLeg_R",
    "LowerLeg_R",
    "Foot_R",
    "Shoulder_L",
    "UpperArm_L",
    "LowerArm_L",
    "Hand_L",
    "Shoulder_R",
    "UpperArm_R",
    "LowerArm_R",
    "Hand_R",
    "joint_Root",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(4.0);
    // Packed once, by the pipeline.
    let dir = std::env::temp_dir().join(format!("cinestream-engine-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("cutscene.cine");
    let clip = cinematic(&CinematicSpec::default().with_seconds(seconds + 1.0));
    let (compressed, _) = compress(&clip, &CompressSettings::default())?;
    write_stream(
        &compressed,
        &WriteOptions::default().with_page_bytes(1024),
        &path,
    )?;

    // The engine opens the asset: its table of contents, read its own way.
    let mut file = std::fs::File::open(&path)?;
    let file_len = file.metadata()?.len();
    let mut head = vec![0u8; HEADER_LEN];
    file.read_exact(&mut head)?;
    let header = Header::parse(&head, file_len)?;
    let mut prefix = vec![0u8; header.pages_offset as usize];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut prefix)?;
    let options = StreamOptions::default().with_missing_page(MissingPage::NotReady);
    let stream = Stream::open_host(prefix, file_len, options)?;

    // The engine's I/O job: read what the stream wants, hand it over.
    let done = Arc::new(AtomicBool::new(false));
    let io = {
        let stream = stream.clone();
        let done = Arc::clone(&done);
        std::thread::spawn(move || -> Result<usize, std::io::Error> {
            let mut pages = 0;
            while !done.load(Ordering::Acquire) {
                for want in stream.wanted_pages(4) {
                    let mut bytes = vec![0u8; want.len];
                    file.seek(SeekFrom::Start(want.offset))?;
                    file.read_exact(&mut bytes)?;
                    match stream.provide_page(want.page, bytes) {
                        Ok(true) => pages += 1,
                        Ok(false) => {}
                        Err(e) => eprintln!("page {}: {e}", want.page),
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(pages)
        })
    };

    // The component, made on the main thread, lives on the animation thread.
    let component = CutsceneComponent {
        player: Player::new(&stream),
        pose: EnginePose(vec![EngineBone::default(); ENGINE_BONES.len()]),
        map: map_by_name(&stream.meta().skeleton, &ENGINE_BONES),
    };
    drop(stream);
    let animation = std::thread::spawn(move || -> Result<_, cinestream::Error> {
        let mut component = component;
        let (mut frames, mut waited) = (0, 0);
        while component.player.time() < seconds {
            let step = component.player.advance(1.0 / 30.0)?;
            frames += 1;
            if !step.ready {
                // The engine holds last frame's pose; the page is on its way.
                waited += 1;
            } else {
                let time = component.player.time();
                let mut writer = Remap {
                    writer: &mut component.pose,
                    map: &component.map,
                };
                component.player.stream().sample_into(time, &mut writer)?;
            }
            // Faster than real time: 4 ms a frame.
            std::thread::sleep(Duration::from_millis(4));
        }
        Ok((frames, waited, component))
    });
    let (frames, waited, component) = animation.join().expect("animation thread")?;
    done.store(true, Ordering::Release);
    let pages = io.join().expect("I/O thread")?;
    let hand = ENGINE_BONES
        .iter()
        .position(|&n| n == "Hand_R")
        .unwrap_or(0);
    println!(
        "{frames} frames played, {waited} waited for a page, {pages} pages read by the engine's I/O job; \
         right hand local position {:?}",
        component.pose.0[hand].position
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

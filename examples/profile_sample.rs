//! Samples a packed clip at random times, for profilers: `profile_sample <file.cine> [poses]`.
use cinestream::container::StreamReader;
use cinestream::Sampling;
use cinestream::Transform;

fn main() -> Result<(), cinestream::Error> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "clip.cine".into());
    let n: usize = args
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let reader = StreamReader::open_file(std::path::Path::new(&path))?;
    assert!(reader.verify().is_sound());
    let mut pose = vec![Transform::IDENTITY; reader.meta().num_bones()];
    let duration = reader.meta().duration();
    let mut x = 12345u32;
    let start = std::time::Instant::now();
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        reader.sample((x as f64 / u32::MAX as f64) * duration, &mut pose)?;
        std::hint::black_box(&pose);
    }
    println!(
        "{:.1} ns per pose",
        start.elapsed().as_nanos() as f64 / n.max(1) as f64
    );
    Ok(())
}

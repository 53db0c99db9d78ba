use cinestream::*;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let clip = import::import_file(std::path::Path::new(&path), &Default::default()).unwrap().remove(0);
    for share in [0.0, 0.5] {
        let s = CompressSettings::default().with_constant_share(share);
        match compress(&clip, &s) {
            Ok((_, st)) => println!("share {share}: ok max {} ratio {}", st.error.max_cm, st.ratio()),
            Err(e) => println!("share {share}: {e}"),
        }
    }
}

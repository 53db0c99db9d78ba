//! The tests' own bit writer: keys laid out least significant bit first,
//! as `docs/FORMAT.md` ("Segment bytes") says, written without the codec's
//! writer so that the decoder's tests do not share its code.

/// Sets the low `count` bits of `value` at bit `bit` of `data`.
pub(crate) fn put_bits(data: &mut [u8], bit: usize, count: u32, value: u32) {
    for i in 0..count as usize {
        let at = bit + i;
        let set = (value >> i) & 1;
        data[at / 8] |= (set as u8) << (at % 8);
    }
}

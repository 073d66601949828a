//! Writing `.npz` fixtures (SMPL bodies, AMASS motions) from integration tests.

use npyz::WriterBuilder;
use npyz::npz::NpzWriter;

/// An `.npz` archive being written.
pub type Npz = NpzWriter<std::io::BufWriter<std::fs::File>>;

/// Writes `data` (C order) as the array `name` of the given `shape`, with
/// numpy's default dtype for `T`.
pub fn put<T: npyz::AutoSerialize + Copy>(npz: &mut Npz, name: &str, shape: &[u64], data: &[T]) {
    let mut w = npz
        .array::<T>(name, Default::default())
        .unwrap()
        .default_dtype()
        .shape(shape)
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

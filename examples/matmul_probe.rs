//! The two kernels that dominate the graph network's step, timed alone on
//! the shapes of the benchmark scene (8800 mesh edges; L = 32 for the CPU
//! size, 128 for the paper size): an E×L by L×L matrix product and an
//! element-wise pass. Each is chained 50 times (every result feeds the next)
//! and read back once, so neither lazy evaluation nor the read-back hides
//! in the figure. Compare with the same chains in PyTorch (see
//! docs/BENCHMARKS.md, "Graph network"):
//! `RAYON_NUM_THREADS=2 cargo run --release --example matmul_probe`.

use burn::tensor::activation::relu;
use burn::tensor::{Device, Distribution, Tensor};

const CHAIN: usize = 50;

/// Milliseconds per link of a chain of `CHAIN` applications of `link`
/// starting from `x`, read back at the end (best of three chains).
fn per_link_ms(x: &Tensor<2>, link: impl Fn(Tensor<2>) -> Tensor<2>) -> f64 {
    (0..3)
        .map(|_| {
            let start = std::time::Instant::now();
            let mut y = x.clone();
            for _ in 0..CHAIN {
                y = link(y);
            }
            drop(y.into_data());
            start.elapsed().as_secs_f64() * 1e3 / CHAIN as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let device = Device::flex();
    for (rows, l) in [(8800usize, 32usize), (8800, 128)] {
        let random = |shape: [usize; 2]| {
            let data = Tensor::<2>::random(shape, Distribution::Default, &device).into_data();
            Tensor::<2>::from_data(data, &device)
        };
        let (a, b) = (random([rows, l]), random([l, l]) / l as f64);
        let matmul = per_link_ms(&a, |y| y.matmul(b.clone()));
        let elementwise = per_link_ms(&a, |y| relu(y + 0.5) - 0.5);
        println!(
            "burn flex [{rows},{l}]x[{l},{l}]: matmul {matmul:.3} ms, relu(y + 0.5) - 0.5 {elementwise:.3} ms"
        );
    }
}

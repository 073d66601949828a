//! The MLP of every encoder, processor update and the decoder:
//! in → L → … → L → out with ReLU, LayerNorm on the output (not in the decoder).
//!
//! The input is a concatenation of parts [p_0, p_1, …]; the first layer is
//! stored as one matrix per part, W·[p_0, p_1, …] = Σ_k W_k·p_k, so a caller
//! can apply it part by part. The edge update uses this to project node
//! latents on N rows and gather them onto E edges, instead of multiplying a
//! 3L-wide concatenation on E rows (E ≈ 6N on a triangle mesh).

use burn::module::Module;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};

/// A multi-layer perceptron with a first layer split by input part.
#[derive(Module, Debug)]
pub struct Mlp {
    /// First layer, one linear map per input part (only part 0 has a bias).
    first: Vec<Linear>,
    /// Remaining layers; ReLU before each.
    rest: Vec<Linear>,
    /// Output LayerNorm (absent in the decoder).
    norm: Option<LayerNorm>,
}

impl Mlp {
    /// An MLP over inputs of widths `parts`, `hidden_layers` hidden layers
    /// of width `width`, `out` outputs, with an output LayerNorm if `layer_norm`.
    pub fn new(
        parts: &[usize],
        width: usize,
        hidden_layers: usize,
        out: usize,
        layer_norm: bool,
        device: &Device,
    ) -> Self {
        let first_out = if hidden_layers == 0 { out } else { width };
        let first = parts
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                LinearConfig::new(d, first_out)
                    .with_bias(k == 0)
                    .init(device)
            })
            .collect();
        let rest = (1..=hidden_layers)
            .map(|l| {
                let d_out = if l == hidden_layers { out } else { width };
                LinearConfig::new(width, d_out).init(device)
            })
            .collect();
        Mlp {
            first,
            rest,
            norm: layer_norm.then(|| LayerNormConfig::new(out).init(device)),
        }
    }

    /// First-layer contribution W_k·p of input part `k` (with the bias for k = 0).
    pub fn project(&self, part: usize, input: Tensor<2>) -> Tensor<2> {
        self.first[part].forward(input)
    }

    /// The rest of the MLP applied to a summed first layer.
    pub fn finish(&self, first_layer: Tensor<2>) -> Tensor<2> {
        let mut x = first_layer;
        for layer in &self.rest {
            x = layer.forward(relu(x));
        }
        match &self.norm {
            Some(norm) => norm.forward(x),
            None => x,
        }
    }

    /// The whole MLP on the parts of its input.
    pub fn forward(&self, parts: Vec<Tensor<2>>) -> Tensor<2> {
        assert_eq!(parts.len(), self.first.len(), "MLP input part count");
        let summed = parts
            .into_iter()
            .enumerate()
            .map(|(k, p)| self.project(k, p))
            .reduce(|a, b| a + b)
            .expect("at least one input part");
        self.finish(summed)
    }
}

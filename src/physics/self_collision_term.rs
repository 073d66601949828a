//! The self-collision penetration energy (DESIGN §4) as an [`Energy`] term.
//!
//! E(x) = w · Σ_i |S_i| (or the area / contour-length ablation), where S_i is
//! six times the volume enclosed by penetrated region i found by the Global
//! Intersection Analysis of [`SelfCollision`]. The value is in the units of
//! the weight w times m³ (m² / m for the ablations); the gradient is exact
//! wherever the intersection combinatorics do not change.

use super::energy::Energy;
use super::hessian::Hessian;
use crate::Vec3;
use crate::collide::{LossKind, SelfCollision, SelfCollisionConfig};
use crate::mesh::TriMesh;
use crate::{Error, Result};

/// The self-collision loss of one garment topology as an energy term.
#[derive(Clone, Debug)]
pub struct SelfCollisionEnergy {
    analysis: SelfCollision,
    loss: LossKind,
    weight: f64,
    /// Knee of the per-region Huber penalty (0 = the exact loss).
    knee: f64,
}

impl SelfCollisionEnergy {
    /// Wraps an analysis with its loss kind and weight (finite, >= 0).
    pub fn new(analysis: SelfCollision, loss: LossKind, weight: f64) -> Result<Self> {
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(Error::invalid(format!(
                "self-collision weight must be finite and >= 0, got {weight}"
            )));
        }
        Ok(SelfCollisionEnergy {
            analysis,
            loss,
            weight,
            knee: 0.0,
        })
    }

    /// Smooths the kink where a region appears: each region's measure a
    /// enters as the Huber penalty with knee `knee` (a²/2k below it; see
    /// [`crate::collide::penalty`]), in the measure's units (|S_i| = 6 ×
    /// volume in m³, or area in m²). Not for the contour-length loss.
    pub fn with_knee(mut self, knee: f64) -> Result<Self> {
        crate::collide::penalty::check_knee(self.loss, knee)?;
        self.knee = knee;
        Ok(self)
    }

    /// The term of `config` (loss, weight, closed loops, cap-only paths)
    /// for the garment `rest`.
    pub fn from_config(rest: &TriMesh, config: &SelfCollisionConfig) -> Result<Self> {
        Self::new(
            SelfCollision::from_config(rest, config)?,
            config.loss,
            config.weight,
        )
    }

    /// The underlying analysis (e.g. for the C metric of a state).
    pub fn analysis(&self) -> &SelfCollision {
        &self.analysis
    }

    /// The loss kind.
    pub fn loss(&self) -> LossKind {
        self.loss
    }

    /// The weight w.
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// The knee of the per-region penalty (0 = exact).
    pub fn knee(&self) -> f64 {
        self.knee
    }
}

impl Energy for SelfCollisionEnergy {
    fn name(&self) -> &str {
        "self_collision"
    }

    /// Returns w · loss and adds its gradient. If the analysis fails (a
    /// non-finite position, or `x` of the wrong length) this returns
    /// `f64::NAN` and leaves `grad` unchanged: the solver's line search
    /// rejects a trial with a non-finite total, and the solver refuses a
    /// non-finite energy at its initial guess.
    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        match self
            .analysis
            .evaluate_smoothed(x, self.loss, self.weight, self.knee)
        {
            Ok(report) => {
                grad.iter_mut().zip(&report.grad).for_each(|(g, d)| *g += d);
                report.loss
            }
            Err(_) => f64::NAN,
        }
    }

    /// With a knee k > 0: the Gauss–Newton curvature of each region below
    /// the knee, (w/k)·∇a_i·∇a_iᵀ (the Huber penalty's a_i²/2k with a_i
    /// linearised), as a rank-one term. Without this the Newton model does
    /// not see the penalty's stiffness and overshoots into the layers again
    /// and again. Adds nothing with k = 0 (the exact loss is linear in a_i)
    /// or if the analysis fails.
    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        if self.knee == 0.0 {
            return;
        }
        if let Ok(regions) = self.analysis.region_measures(x, self.loss) {
            for (a, gradient) in regions {
                if a < self.knee {
                    hessian.add_rank_one(self.weight / self.knee, gradient);
                }
            }
        }
    }

    /// |S_i| has a kink where region i appears or vanishes (a knee > 0
    /// smooths that one, but a region's measure can still change slope where
    /// the intersection paths change combinatorially).
    fn is_smooth(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::LoopClosure;
    use nalgebra::{Rotation3, Unit};

    /// Closed box with corners `lo`, `hi` (12 outward-facing triangles),
    /// rotated by `angle` about `axis` through the origin.
    fn closed_box(lo: Vec3, hi: Vec3, axis: Vec3, angle: f64) -> TriMesh {
        let r = Rotation3::from_axis_angle(&Unit::new_normalize(axis), angle);
        // Corner i has coordinate k at `hi` when bit k of i is set.
        let positions = (0..8)
            .map(|i: usize| r * Vec3::from_fn(|k, _| if i >> k & 1 == 1 { hi[k] } else { lo[k] }))
            .collect();
        let faces = vec![
            [0, 2, 3],
            [0, 3, 1],
            [4, 5, 7],
            [4, 7, 6],
            [0, 1, 5],
            [0, 5, 4],
            [2, 6, 7],
            [2, 7, 3],
            [0, 4, 6],
            [0, 6, 2],
            [1, 3, 7],
            [1, 7, 5],
        ];
        TriMesh { positions, faces }
    }

    fn merge(a: TriMesh, b: TriMesh) -> TriMesh {
        let base = a.positions.len();
        let mut out = a;
        out.positions.extend(b.positions);
        out.faces
            .extend(b.faces.iter().map(|f| f.map(|v| v + base)));
        out
    }

    /// Box B pushed into box A and turned a little: no edge meets an edge.
    fn intersecting_boxes() -> TriMesh {
        merge(
            closed_box(Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0), Vec3::z(), 0.0),
            closed_box(
                Vec3::new(0.3, 0.4, 0.2),
                Vec3::new(1.3, 1.45, 1.25),
                Vec3::new(0.3, -0.5, 0.8),
                0.1,
            ),
        )
    }

    fn energy(mesh: &TriMesh, loss: LossKind, weight: f64) -> SelfCollisionEnergy {
        SelfCollisionEnergy::new(
            SelfCollision::new(mesh, &LoopClosure::None).unwrap(),
            loss,
            weight,
        )
        .unwrap()
    }

    #[test]
    fn gradient_matches_central_differences() {
        let mesh = intersecting_boxes();
        // Knee 10: every region's |S_i| and area (< 2 here) is on the
        // quadratic side of the Huber penalty.
        let cases = [
            (LossKind::Volume, 0.0),
            (LossKind::Area, 0.0),
            (LossKind::ContourLength, 0.0),
            (LossKind::Volume, 10.0),
            (LossKind::Area, 10.0),
        ];
        for (loss, knee) in cases {
            let e = energy(&mesh, loss, 3.0).with_knee(knee).unwrap();
            let x = &mesh.positions;
            // Start from a non-zero buffer: the term must add, not overwrite.
            let offset = Vec3::new(0.5, -1.0, 2.0);
            let mut grad = vec![offset; x.len()];
            let value = e.value_and_gradient(x, &mut grad);
            assert!(value > 0.0, "{loss:?}: boxes overlap, value {value}");
            let analytic: Vec<Vec3> = grad.iter().map(|g| g - offset).collect();
            let scale = analytic.iter().map(|g| g.amax()).fold(0.0, f64::max);
            assert!(scale > 0.0);
            let h = 1e-6;
            for v in 0..x.len() {
                for k in 0..3 {
                    let mut p = x.clone();
                    p[v][k] += h;
                    let plus = e.value(&p);
                    p[v][k] -= 2.0 * h;
                    let minus = e.value(&p);
                    let fd = (plus - minus) / (2.0 * h);
                    assert!(
                        (fd - analytic[v][k]).abs() <= 1e-5 * scale,
                        "{loss:?}: vertex {v} axis {k}: fd {fd} vs analytic {}",
                        analytic[v][k]
                    );
                }
            }
        }
    }

    #[test]
    fn a_knee_softens_small_regions_and_only_shifts_large_ones() {
        let mesh = intersecting_boxes();
        let exact = energy(&mesh, LossKind::Volume, 1.0);
        let report = exact
            .analysis()
            .evaluate(&mesh.positions, LossKind::Volume, 1.0)
            .unwrap();
        let sizes: Vec<f64> = report
            .regions
            .iter()
            .map(|r| r.signed_volume6.abs())
            .collect();
        assert!(!sizes.is_empty());
        let x = &mesh.positions;
        // Knee above every region: Σ a²/2k.
        let big = 4.0 * sizes.iter().cloned().fold(0.0, f64::max);
        let soft = exact.clone().with_knee(big).unwrap().value(x);
        let expected: f64 = sizes.iter().map(|a| a * a / (2.0 * big)).sum();
        assert!((soft - expected).abs() <= 1e-12 * expected);
        // Knee below every region: each loses k/2.
        let small = 0.25 * sizes.iter().cloned().fold(f64::INFINITY, f64::min);
        let shifted = exact.clone().with_knee(small).unwrap().value(x);
        let expected = report.loss - 0.5 * small * sizes.len() as f64;
        assert!((shifted - expected).abs() <= 1e-12 * report.loss);
        // The contour length has no regions to smooth.
        let contour = energy(&mesh, LossKind::ContourLength, 1.0);
        assert!(contour.clone().with_knee(1e-3).is_err());
        assert!(exact.with_knee(f64::NAN).is_err());
    }

    #[test]
    fn region_gradients_sum_to_the_loss_gradient() {
        let mesh = intersecting_boxes();
        for loss in [LossKind::Volume, LossKind::Area] {
            let e = energy(&mesh, loss, 2.0);
            let x = &mesh.positions;
            let regions = e.analysis().region_measures(x, loss).unwrap();
            assert!(!regions.is_empty());
            let report = e.analysis().evaluate(x, loss, 2.0).unwrap();
            let measures: f64 = regions.iter().map(|(a, _)| a).sum();
            assert!((2.0 * measures - report.loss).abs() <= 1e-12 * report.loss);
            let scale = report.grad.iter().map(|g| g.amax()).fold(0.0, f64::max);
            for v in 0..x.len() {
                let summed: Vec3 = regions.iter().map(|(_, g)| 2.0 * g[v]).sum();
                assert!(
                    (summed - report.grad[v]).amax() <= 1e-12 * scale,
                    "{loss:?} {v}"
                );
            }
        }
    }

    #[test]
    fn a_knee_adds_one_rank_one_curvature_per_shallow_region() {
        let mesh = intersecting_boxes();
        let x = &mesh.positions;
        let exact = energy(&mesh, LossKind::Volume, 3.0);
        let regions = exact
            .analysis()
            .region_measures(x, LossKind::Volume)
            .unwrap();
        let mut h = Hessian::new(x.len());
        exact.add_hessian(x, &mut h);
        assert!(
            h.rank_one_terms().is_empty(),
            "the exact loss is linear in a"
        );
        let knee = 2.0 * regions.iter().map(|(a, _)| *a).fold(0.0, f64::max);
        let smoothed = exact.with_knee(knee).unwrap();
        let mut h = Hessian::new(x.len());
        smoothed.add_hessian(x, &mut h);
        assert_eq!(h.rank_one_terms().len(), regions.len());
        for ((c, u), (_, g)) in h.rank_one_terms().iter().zip(&regions) {
            assert_eq!(*c, 3.0 / knee);
            assert_eq!(u, g);
        }
    }

    #[test]
    fn value_scales_with_the_weight_and_matches_the_analysis() {
        let mesh = intersecting_boxes();
        let report = SelfCollision::new(&mesh, &LoopClosure::None)
            .unwrap()
            .evaluate(&mesh.positions, LossKind::Volume, 1.0)
            .unwrap();
        let e = energy(&mesh, LossKind::Volume, 2.5);
        assert!((e.value(&mesh.positions) - 2.5 * report.loss).abs() <= 1e-12 * report.loss);
    }

    #[test]
    fn zero_for_an_intersection_free_mesh() {
        let mesh = merge(
            closed_box(Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0), Vec3::z(), 0.0),
            closed_box(
                Vec3::new(1.2, 0.4, 0.2),
                Vec3::new(2.2, 1.45, 1.25),
                Vec3::y(),
                0.05,
            ),
        );
        let e = energy(&mesh, LossKind::Volume, 30_000.0);
        let mut grad = vec![Vec3::zeros(); mesh.positions.len()];
        assert_eq!(e.value_and_gradient(&mesh.positions, &mut grad), 0.0);
        assert!(grad.iter().all(|g| *g == Vec3::zeros()));
    }

    #[test]
    fn failed_analysis_gives_nan_and_leaves_the_gradient() {
        let mesh = intersecting_boxes();
        let e = energy(&mesh, LossKind::Volume, 1.0);
        let mut x = mesh.positions.clone();
        x[3].y = f64::NAN;
        let mut grad = vec![Vec3::new(1.0, 2.0, 3.0); x.len()];
        assert!(e.value_and_gradient(&x, &mut grad).is_nan());
        assert!(grad.iter().all(|g| *g == Vec3::new(1.0, 2.0, 3.0)));
    }

    #[test]
    fn rejects_a_bad_weight() {
        let mesh = intersecting_boxes();
        for weight in [-1.0, f64::NAN, f64::INFINITY] {
            let analysis = SelfCollision::new(&mesh, &LoopClosure::None).unwrap();
            assert!(SelfCollisionEnergy::new(analysis, LossKind::Volume, weight).is_err());
        }
    }

    /// E = k/2 · Σ_v |x_v − target_v|² over the vertices that have a target.
    struct Springs {
        targets: Vec<Option<Vec3>>,
        stiffness: f64,
    }

    impl Energy for Springs {
        fn name(&self) -> &str {
            "springs"
        }
        fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
            let mut value = 0.0;
            for (v, target) in self.targets.iter().enumerate() {
                if let Some(t) = target {
                    grad[v] += self.stiffness * (x[v] - t);
                    value += 0.5 * self.stiffness * (x[v] - t).norm_squared();
                }
            }
            value
        }
        fn add_hessian(&self, _x: &[Vec3], hessian: &mut crate::physics::hessian::Hessian) {
            for (v, target) in self.targets.iter().enumerate() {
                if target.is_some() {
                    hessian.add_block(v, v, self.stiffness * nalgebra::Matrix3::identity());
                }
            }
        }
    }

    /// The volume term, declared smooth: the solver then never samples
    /// beyond its kink.
    struct DeclaredSmooth(SelfCollisionEnergy);

    impl Energy for DeclaredSmooth {
        fn name(&self) -> &str {
            "self_collision"
        }
        fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
            self.0.value_and_gradient(x, grad)
        }
    }

    /// Box B (0.6 m square, 1 m long, 5.37 cm from box A's face x = 1) with
    /// springs pulling each of its corners 21.31 cm towards A; A is fixed. The
    /// penetration volume 0.36·d of B's front in A grows linearly with the
    /// depth d, so its force (w · 6 · 0.36 / 4 per front corner, far above
    /// the springs' 1.6 N) holds B's front on A's face: a kink, as where
    /// two layers of cloth meet. Returns the report and the positions.
    fn press_box_into_box(
        as_kink: bool,
    ) -> (crate::physics::solver::descent::SolveReport, Vec<Vec3>) {
        use crate::physics::energy::EnergySum;
        use crate::physics::solver::descent::Problem;
        use crate::physics::solver::newton::{SparseCholesky, minimize};
        let mesh = merge(
            closed_box(Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0), Vec3::z(), 0.0),
            closed_box(
                Vec3::new(1.0537, 0.2, 0.2),
                Vec3::new(2.0537, 0.8, 0.8),
                Vec3::z(),
                0.0,
            ),
        );
        // Not a dyadic fraction of the gap: no trial step lands B's front
        // exactly in A's face plane.
        let shift = Vec3::new(-0.2131, 0.0, 0.0);
        let free: Vec<bool> = (0..16).map(|v| v >= 8).collect();
        let springs = Springs {
            targets: (0..16)
                .map(|v| (v >= 8).then(|| mesh.positions[v] + shift))
                .collect(),
            stiffness: 10.0,
        };
        let volume = energy(&mesh, LossKind::Volume, 1000.0);
        let mut sum = EnergySum::new();
        sum.push(springs);
        if as_kink {
            sum.push(volume);
        } else {
            sum.push(DeclaredSmooth(volume));
        }
        let problem = Problem {
            free: &free,
            diagonal: &[10.0; 16],
            force_scale: 1.0,
            faces: &[],
            crushed_areas: &[],
        };
        let mut x = mesh.positions.clone();
        let report = minimize(
            &sum,
            &mut x,
            &problem,
            1e-6,
            300,
            &mut SparseCholesky::default(),
        )
        .unwrap();
        (report, x)
    }

    #[test]
    fn the_solver_converges_onto_the_kink_of_the_volume() {
        let (report, x) = press_box_into_box(true);
        assert!(report.converged, "{report:?}");
        // B's front corners (x = 1.0537 at rest; bit 0 of the corner index
        // clear) rest on A's face, its back corners reach their targets.
        for v in 8..16 {
            let expected = if (v - 8) & 1 == 0 {
                1.0
            } else {
                2.0537 - 0.2131
            };
            assert!((x[v].x - expected).abs() < 1e-5, "vertex {v}: {}", x[v]);
            assert!(
                (x[v].y - [0.2, 0.8][(v - 8) >> 1 & 1]).abs() < 1e-5,
                "{}",
                x[v]
            );
        }
        let c = report.evaluation.term("self_collision").unwrap() / 1000.0;
        assert!(c < 1e-9, "volume term left {c}");
    }

    #[test]
    fn without_sampling_beyond_the_kink_the_solver_stalls_there() {
        let (report, _) = press_box_into_box(false);
        assert!(!report.converged, "{report:?}");
    }
}

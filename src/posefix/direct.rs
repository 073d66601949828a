//! Pose repair without a learned field: Gauss–Newton descent in pose space
//! on the depth by which colliding body parts pass into each other, until
//! the exact label finds the pose collision-free. The direct baseline a
//! collision field has to beat, and a repair that needs no training.
//!
//! **Residuals.** For every part pair (a, b) the exact label reports
//! colliding, the penetrating vertices of a are those connected, over the
//! edges between a's vertices, to a corner of one of a's colliding faces
//! and lying inside b: signed distance d_b(v) < 0 to b's surface (sign from
//! the angle-weighted pseudonormal of the closest feature, [`BodyQuery`]).
//! The colliding faces' own corners count whenever d_b(v) < δ, so two faces
//! that cross with every corner outside the other part still push apart.
//! The same for b in a. Each such vertex contributes r_v = d_b(v) − δ
//! (metres), δ the clearance aimed for.
//!
//! **Step.** With Δ the change of θ (6D per joint) and W the pose distance's
//! weights ([`PoseDistance`]),
//!
//!   min_Δ ½ Σ_v (r_v + J_v Δ)² + ½ λ s Σ_i w_i (θ_i + Δ_i − θ₀_i)²,
//!
//! s = tr(JᵀJ) / dims so λ is free of units and of the number of
//! residuals: the residuals go to zero in the linearisation while, among
//! the steps that do that, the one nearest θ₀ in the weighted distance
//! wins. J_v = n_vᵀ (∂x_v/∂θ − Σ_c β_c ∂x_c/∂θ): n_v the unit direction in
//! which d grows, β the barycentric weights of the closest point on b's face
//! (b's surface moves with θ too). ∂x/∂θ chains linear blend skinning
//! x_v = Σ_j w_vj T_j(θ) x̄_v through central differences of the joint
//! transforms T_j alone (forward kinematics, 2 · dims evaluations per
//! step; the vertices need no re-skinning). The step is scaled so no
//! penetrating vertex moves more than `max_move` in the linearisation and
//! no joint's 6D vector more than `max_turn`, then clamped into the joint
//! limits and moved onto the rotations; when that leaves less than a tenth
//! of it, the step is solved again with the components it pushes past
//! their limits held there. Vertices that penetrated at earlier steps keep
//! a residual while nearer than δ; a pose still colliding after
//! `max_iterations` steps descends again with every joint weighted alike.
//!
//! The depth is measured in floating point; whether the pose collides is
//! always the exact label's answer.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use nalgebra::{DMatrix, DVector, Matrix3, Matrix3x4, Vector4};

use super::fix::PoseDistance;
use super::label::SelfCollisionLabel;
use super::space::{JointLimits, PoseSpace};
use crate::body::query::{BodyQuery, ClosestPoint};
use crate::body::{Body, Pose};
use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// How the descent runs.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectOptions {
    /// δ: the clearance past the other part's surface aimed for (m).
    pub clearance: f64,
    /// λ: weight of the distance to the input pose, relative to the
    /// residuals' curvature.
    pub pose_weight: f64,
    /// Largest linearised move of a penetrating vertex per step (m).
    pub max_move: f64,
    /// Largest change of one joint's 6D vector per step (its norm).
    pub max_turn: f64,
    /// Steps at most.
    pub max_iterations: usize,
    /// When the descent ends colliding, descend again from the input with
    /// every joint weighted alike (the subtree weights can leave the only
    /// way out too expensive: legs wound around each other).
    pub retry_unweighted: bool,
    /// When those descents end colliding, the same again aiming for this
    /// larger clearance (m): legs wound around each other come apart when
    /// pushed further than the surfaces alone ask for.
    pub retry_clearance: Option<f64>,
}

impl Default for DirectOptions {
    fn default() -> Self {
        DirectOptions {
            clearance: 0.003,
            pose_weight: 1e-3,
            max_move: 0.02,
            max_turn: 0.1,
            max_iterations: 80,
            retry_unweighted: true,
            retry_clearance: Some(0.01),
        }
    }
}

/// The outcome of a direct repair.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectFix {
    /// θ after the repair.
    pub theta: Vec<f64>,
    /// The repaired pose (joints outside the space as in the input).
    pub pose: Pose,
    /// Steps taken (an exact label each, and one more at the end).
    pub iterations: usize,
    /// Whether the exact label finds the result collision-free.
    pub free: bool,
}

/// The descent of one body: its parts' faces and vertex neighbourhoods,
/// prepared once.
pub struct DirectRepair<'a> {
    body: &'a Body,
    label: &'a SelfCollisionLabel<'a>,
    space: &'a PoseSpace,
    distance: &'a PoseDistance,
    limits: &'a JointLimits,
    /// Faces of every part.
    part_faces: Vec<Vec<[usize; 3]>>,
    /// Whether each vertex is a corner of a face of each part
    /// (`vertex_in_part[v * parts + p]`).
    vertex_in_part: Vec<bool>,
    /// Vertex neighbours over the mesh edges.
    neighbours: Vec<Vec<usize>>,
    /// Edges (ascending vertex pair) on the boundary of each part's faces:
    /// where the part is cut from its neighbours.
    cut_edges: Vec<HashSet<(usize, usize)>>,
    /// Whether each vertex lies on a cut of each part (`v * parts + p`).
    cut_vertex: Vec<bool>,
}

/// One penetrating vertex: r = d − δ and its row of J.
struct Residual {
    value: f64,
    row: Vec<f64>,
}

impl<'a> DirectRepair<'a> {
    /// Prepares the descent for `label`'s body and parts.
    pub fn new(
        body: &'a Body,
        label: &'a SelfCollisionLabel<'a>,
        space: &'a PoseSpace,
        distance: &'a PoseDistance,
        limits: &'a JointLimits,
    ) -> Result<Self> {
        let parts = label.parts();
        let n_parts = parts.len();
        let n_vertices = body.mesh.num_vertices();
        if distance.weights.len() != space.dims() {
            return Err(Error::invalid(format!(
                "direct repair: {} distance weights for a pose space of {}",
                distance.weights.len(),
                space.dims()
            )));
        }
        let mut part_faces = vec![Vec::new(); n_parts];
        let mut vertex_in_part = vec![false; n_vertices * n_parts];
        let mut neighbours = vec![Vec::new(); n_vertices];
        for (f, face) in body.mesh.faces.iter().enumerate() {
            let p = parts.face_part[f];
            part_faces[p].push(*face);
            for k in 0..3 {
                vertex_in_part[face[k] * n_parts + p] = true;
                neighbours[face[k]].push(face[(k + 1) % 3]);
                neighbours[face[k]].push(face[(k + 2) % 3]);
            }
        }
        for n in &mut neighbours {
            n.sort_unstable();
            n.dedup();
        }
        let mut edge_faces: Vec<HashMap<(usize, usize), usize>> = vec![HashMap::new(); n_parts];
        for (f, face) in body.mesh.faces.iter().enumerate() {
            for k in 0..3 {
                let (u, v) = (face[k], face[(k + 1) % 3]);
                *edge_faces[parts.face_part[f]]
                    .entry((u.min(v), u.max(v)))
                    .or_default() += 1;
            }
        }
        let mut cut_vertex = vec![false; n_vertices * n_parts];
        let cut_edges: Vec<HashSet<(usize, usize)>> = edge_faces
            .iter()
            .enumerate()
            .map(|(p, counts)| {
                counts
                    .iter()
                    .filter(|(_, n)| **n == 1)
                    .map(|(&(u, v), _)| {
                        cut_vertex[u * n_parts + p] = true;
                        cut_vertex[v * n_parts + p] = true;
                        (u, v)
                    })
                    .collect()
            })
            .collect();
        Ok(DirectRepair {
            body,
            label,
            space,
            distance,
            limits,
            part_faces,
            vertex_in_part,
            neighbours,
            cut_edges,
            cut_vertex,
        })
    }

    /// Repairs `pose`: steps until the exact label finds it collision-free
    /// or `options.max_iterations` steps are spent. A pose that does not
    /// collide is returned unchanged.
    pub fn repair(&self, pose: &Pose, options: &DirectOptions) -> Result<DirectFix> {
        check_options(options)?;
        let unit = vec![1.0; self.distance.weights.len()];
        let mut weightings: Vec<&[f64]> = vec![&self.distance.weights];
        if options.retry_unweighted {
            weightings.push(&unit);
        }
        let wider = options.retry_clearance.filter(|c| *c > options.clearance);
        let mut iterations = 0;
        let mut last = None;
        'attempts: for clearance in std::iter::once(options.clearance).chain(wider) {
            let attempt = DirectOptions {
                clearance,
                ..options.clone()
            };
            for &weights in &weightings {
                let fix = self.descend(pose, &attempt, weights)?;
                iterations += fix.iterations;
                let free = fix.free;
                last = Some(DirectFix { iterations, ..fix });
                if free {
                    break 'attempts;
                }
            }
        }
        Ok(last.expect("at least one descent"))
    }

    /// The descent with the pose distance weighted by `weights`.
    fn descend(&self, pose: &Pose, options: &DirectOptions, weights: &[f64]) -> Result<DirectFix> {
        let theta0 = self.space.encode(pose)?;
        let (lower, upper) = self.limits.bounds();
        let mut theta = theta0.clone();
        let mut current = pose.clone();
        let mut memory = BTreeMap::new();
        let mut tree = None;
        for iteration in 0..=options.max_iterations {
            let x = self.label.posed_vertices(&current)?;
            let found = self.label.label_vertices(&x, false, &mut tree)?;
            let residuals = if !found.collides() || iteration == options.max_iterations {
                Vec::new()
            } else {
                self.residuals(&current, &x, &found.faces, options.clearance, &mut memory)?
            };
            // Free, out of steps, or only touching faces with every corner
            // at the clearance: nothing (more) to push on.
            if residuals.is_empty() {
                return Ok(DirectFix {
                    theta,
                    pose: current,
                    iterations: iteration,
                    free: !found.collides(),
                });
            }
            let mut next = theta.clone();
            for hold in [false, true] {
                let step = self.step(
                    &residuals,
                    weights,
                    (&lower, &upper),
                    hold,
                    &theta,
                    &theta0,
                    options,
                );
                next = self
                    .space
                    .step_within(&theta, &step, &lower, &upper)
                    .ok_or_else(|| {
                        Error::invalid("direct repair: a step reached a degenerate rotation")
                    })?;
                let taken: f64 = next.iter().zip(&theta).map(|(a, b)| (a - b).powi(2)).sum();
                let asked: f64 = step.iter().map(|d| d * d).sum();
                if taken >= 0.01 * asked {
                    break;
                }
            }
            theta = next;
            current = self.space.decode(&theta, pose)?;
        }
        unreachable!("the loop returns at the last iteration")
    }

    /// The residuals and their rows of J at `pose` (posed vertices `x`),
    /// whose exact label found the colliding face pairs `faces`.
    ///
    /// `memory` holds, per ordered part pair, the vertices that penetrated
    /// at earlier steps; they keep a residual while they are nearer than
    /// the clearance, so a step that frees one pair cannot simply undo the
    /// step before it that freed another.
    fn residuals(
        &self,
        pose: &Pose,
        x: &[Vec3],
        faces: &[[u32; 2]],
        clearance: f64,
        memory: &mut BTreeMap<(usize, usize), BTreeSet<usize>>,
    ) -> Result<Vec<Residual>> {
        let parts = self.label.parts();
        let n_parts = parts.len();
        // Colliding faces of each ordered part pair (a's faces against b).
        let mut pair_faces: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
        for p in faces {
            let (f, g) = (p[0] as usize, p[1] as usize);
            let (a, b) = (parts.face_part[f], parts.face_part[g]);
            pair_faces.entry((a, b)).or_default().push(f);
            pair_faces.entry((b, a)).or_default().push(g);
        }
        let mut queries: BTreeMap<usize, BodyQuery> = BTreeMap::new();
        for &(_, b) in pair_faces.keys().chain(memory.keys()) {
            if let std::collections::btree_map::Entry::Vacant(slot) = queries.entry(b) {
                let mesh = TriMesh {
                    positions: x.to_vec(),
                    faces: self.part_faces[b].clone(),
                };
                slot.insert(BodyQuery::new(&mesh)?);
            }
        }
        // Penetrating vertices: (vertex, its closest point's face corners
        // and weights, the direction in which d grows, d).
        let mut contacts: Vec<Contact> = Vec::new();
        let mut seen_by_pair: BTreeMap<(usize, usize), BTreeMap<usize, bool>> = BTreeMap::new();
        for (&(a, b), colliding) in &pair_faces {
            let query = &queries[&b];
            let seen = seen_by_pair.entry((a, b)).or_default();
            let mut stack: Vec<usize> = Vec::new();
            let face_list = &self.body.mesh.faces;
            for &f in colliding {
                for &v in &face_list[f] {
                    if seen.contains_key(&v) {
                        continue;
                    }
                    let c = query.closest(&x[v]);
                    let beyond = self.beyond_cut(b, query, &c);
                    let inside = c.signed_distance < 0.0 && !beyond;
                    seen.insert(v, inside);
                    if c.signed_distance < clearance && !beyond {
                        contacts.push(contact(query, v, &x[v], &c));
                    }
                    if inside {
                        stack.push(v);
                    }
                }
            }
            while let Some(v) = stack.pop() {
                for &u in &self.neighbours[v] {
                    if !self.vertex_in_part[u * n_parts + a] || seen.contains_key(&u) {
                        continue;
                    }
                    let c = query.closest(&x[u]);
                    let inside = c.signed_distance < 0.0 && !self.beyond_cut(b, query, &c);
                    seen.insert(u, inside);
                    if inside {
                        contacts.push(contact(query, u, &x[u], &c));
                        stack.push(u);
                    }
                }
            }
        }
        for (&(a, b), vertices) in memory.iter() {
            let query = &queries[&b];
            let seen = seen_by_pair.get(&(a, b));
            for &v in vertices {
                if seen.is_some_and(|s| s.contains_key(&v)) {
                    continue;
                }
                let c = query.closest(&x[v]);
                if c.signed_distance < clearance && !self.beyond_cut(b, query, &c) {
                    contacts.push(contact(query, v, &x[v], &c));
                }
            }
        }
        for (pair, seen) in seen_by_pair {
            let remembered = memory.entry(pair).or_default();
            remembered.extend(seen.iter().filter(|(_, inside)| **inside).map(|(v, _)| *v));
        }
        if contacts.is_empty() {
            return Ok(Vec::new());
        }
        let derivatives = SkinningDerivatives::new(self.body, self.space, pose)?;
        Ok(contacts
            .iter()
            .map(|(v, corners, weights, normal, d)| {
                let terms = [
                    (*v, 1.0),
                    (corners[0], -weights[0]),
                    (corners[1], -weights[1]),
                    (corners[2], -weights[2]),
                ];
                let row = derivatives.directional(&terms, normal);
                Residual {
                    value: d - clearance,
                    row,
                }
            })
            .collect())
    }

    /// Whether the closest point `c` on part `b` lies on the cut where `b`
    /// meets its neighbours: the point is then beyond the part, and the
    /// sign of its distance says nothing about being inside the body.
    fn beyond_cut(&self, b: usize, query: &BodyQuery, c: &ClosestPoint) -> bool {
        let corners = query.faces()[c.face];
        let zero: Vec<usize> = (0..3).filter(|&k| c.barycentric[k] == 0.0).collect();
        match zero.len() {
            1 => {
                let (u, v) = (corners[(zero[0] + 1) % 3], corners[(zero[0] + 2) % 3]);
                self.cut_edges[b].contains(&(u.min(v), u.max(v)))
            }
            2 => {
                let k = 3 - zero[0] - zero[1];
                self.cut_vertex[corners[k] * self.label.parts().len() + b]
            }
            _ => false,
        }
    }

    /// The damped Gauss–Newton step, scaled to `max_move`.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &self,
        residuals: &[Residual],
        weights: &[f64],
        (lower, upper): (&[f64], &[f64]),
        hold: bool,
        theta: &[f64],
        theta0: &[f64],
        options: &DirectOptions,
    ) -> Vec<f64> {
        let n = theta.len();
        let mut jtj = DMatrix::<f64>::zeros(n, n);
        let mut rhs = DVector::<f64>::zeros(n);
        let mut nonzero: Vec<usize> = Vec::with_capacity(n);
        for r in residuals {
            nonzero.clear();
            nonzero.extend((0..n).filter(|&i| r.row[i] != 0.0));
            for &i in &nonzero {
                let ri = r.row[i];
                rhs[i] -= ri * r.value;
                for &k in &nonzero {
                    jtj[(i, k)] += ri * r.row[k];
                }
            }
        }
        let scale = (jtj.trace() / n as f64).max(1e-12);
        let damping = options.pose_weight * scale;
        for i in 0..n {
            let w = weights[i];
            jtj[(i, i)] += damping * w;
            rhs[i] -= damping * w * (theta[i] - theta0[i]);
        }
        let solve = |a: DMatrix<f64>, b: DVector<f64>| match a.cholesky() {
            Some(c) => c.solve(&b),
            None => b / (scale * (1.0 + options.pose_weight)),
        };
        let mut step = solve(jtj.clone(), rhs.clone());
        // With `hold`, the components the step pushes out of the joint
        // limits are held there and the others solved again, a few rounds
        // (the caller asks for it when clamping and moving onto the
        // rotations cancelled the plain step: the way out runs through a
        // joint at its limit).
        if hold {
            let mut held: Vec<Option<f64>> = vec![None; n];
            for _ in 0..8 {
                let mut changed = false;
                for i in 0..n {
                    let moved = theta[i] + step[i];
                    if held[i].is_none() && (moved < lower[i] || moved > upper[i]) {
                        held[i] = Some(moved.clamp(lower[i], upper[i]) - theta[i]);
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
                let (mut a, mut b) = (jtj.clone(), rhs.clone());
                for i in 0..n {
                    if let Some(d) = held[i] {
                        for r in 0..n {
                            if held[r].is_none() {
                                b[r] -= a[(r, i)] * d;
                            }
                        }
                    }
                }
                for i in 0..n {
                    if let Some(d) = held[i] {
                        a.row_mut(i).fill(0.0);
                        a.column_mut(i).fill(0.0);
                        a[(i, i)] = 1.0;
                        b[i] = d;
                    }
                }
                step = solve(a, b);
            }
        }
        let largest = residuals
            .iter()
            .map(|r| {
                r.row
                    .iter()
                    .zip(step.iter())
                    .map(|(a, b)| a * b)
                    .sum::<f64>()
                    .abs()
            })
            .fold(0.0, f64::max);
        let turn = step
            .as_slice()
            .chunks_exact(super::space::DIMS_PER_JOINT)
            .map(|c| c.iter().map(|v| v * v).sum::<f64>().sqrt())
            .fold(0.0, f64::max);
        let shrink = (options.max_move / largest.max(1e-300))
            .min(options.max_turn / turn.max(1e-300))
            .min(1.0);
        step.iter().map(|s| s * shrink).collect()
    }
}

fn check_options(options: &DirectOptions) -> Result<()> {
    let ok = options.clearance.is_finite()
        && options.clearance >= 0.0
        && options.pose_weight.is_finite()
        && options.pose_weight > 0.0
        && options.max_move.is_finite()
        && options.max_move > 0.0
        && options.max_turn.is_finite()
        && options.max_turn > 0.0
        && options
            .retry_clearance
            .is_none_or(|c| c.is_finite() && c >= 0.0);
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "direct repair: clearances must be ≥ 0, pose weight, largest move and turn > 0 (got {options:?})"
        )))
    }
}

/// A penetrating vertex: the vertex, its closest point's face corners and
/// weights on the other part, the unit direction in which its signed
/// distance grows, and the distance.
type Contact = (usize, [usize; 3], [f64; 3], Vec3, f64);

/// The [`Contact`] of vertex `v` at `p` with closest point `c`.
fn contact(query: &BodyQuery, v: usize, p: &Vec3, c: &ClosestPoint) -> Contact {
    let offset = p - c.point;
    let sign = c.signed_distance.signum();
    let normal = if offset.norm() > 1e-12 {
        sign * offset.normalize()
    } else {
        c.face_normal
    };
    (
        v,
        query.faces()[c.face],
        c.barycentric,
        normal,
        c.signed_distance,
    )
}

/// ∂x_v/∂θ of linear blend skinning at one pose: per θ component, the
/// derivative of every joint's transform (central differences through the
/// space's decoding, so the 6D → rotation projection is part of it).
pub struct SkinningDerivatives<'a> {
    body: &'a Body,
    rest: Cow<'a, [Vec3]>,
    /// `joint[k][j]`: ∂T_j/∂θ_k as a 3×4 affine matrix.
    joint: Vec<Vec<Matrix3x4<f64>>>,
    /// Per joint, the θ components whose ∂T_j/∂θ_k is not zero.
    moving: Vec<Vec<usize>>,
}

impl<'a> SkinningDerivatives<'a> {
    /// Step of the central differences.
    const H: f64 = 1e-6;

    /// The derivatives at `pose`.
    pub fn new(body: &'a Body, space: &PoseSpace, pose: &Pose) -> Result<Self> {
        let theta = space.encode(pose)?;
        let affine = |pose: &Pose| -> Vec<Matrix3x4<f64>> {
            body.joint_transforms(pose)
                .iter()
                .map(|g| {
                    let r: Matrix3<f64> = g.rotation.to_rotation_matrix().into_inner();
                    let mut m = Matrix3x4::zeros();
                    m.fixed_view_mut::<3, 3>(0, 0).copy_from(&r);
                    m.set_column(3, &g.translation.vector);
                    m
                })
                .collect()
        };
        let mut joint: Vec<Vec<Matrix3x4<f64>>> = Vec::with_capacity(theta.len());
        let mut probe = theta.clone();
        for k in 0..theta.len() {
            probe[k] = theta[k] + Self::H;
            let plus = affine(&space.decode(&probe, pose)?);
            probe[k] = theta[k] - Self::H;
            let minus = affine(&space.decode(&probe, pose)?);
            probe[k] = theta[k];
            joint.push(
                plus.iter()
                    .zip(&minus)
                    .map(|(p, m)| (p - m) / (2.0 * Self::H))
                    .collect(),
            );
        }
        let rest = match &body.pose_correctives {
            Some(correctives) => Cow::Owned(correctives.apply(&body.mesh.positions, pose)),
            None => Cow::Borrowed(&body.mesh.positions[..]),
        };
        let moving = (0..body.skeleton.len())
            .map(|j| {
                (0..joint.len())
                    .filter(|&k| joint[k][j].iter().any(|v| *v != 0.0))
                    .collect()
            })
            .collect();
        Ok(SkinningDerivatives {
            body,
            rest,
            joint,
            moving,
        })
    }

    /// ∂x_v/∂θ_k for every k.
    pub fn vertex(&self, v: usize) -> Vec<Vec3> {
        let x = &self.rest[v];
        let h = Vector4::new(x.x, x.y, x.z, 1.0);
        self.joint
            .iter()
            .map(|per_joint| {
                self.body
                    .weights
                    .vertex(v)
                    .iter()
                    .map(|&(j, w)| w * (per_joint[j] * h))
                    .sum()
            })
            .collect()
    }

    /// nᵀ Σ_i c_i ∂x_{v_i}/∂θ_k for every k, `terms` the (v_i, c_i): per
    /// joint j the 3×4 matrix Σ_i c_i w_{v_i j} n h_{v_i}ᵀ, then its inner
    /// product with ∂T_j/∂θ_k for the θ components that move j.
    pub fn directional(&self, terms: &[(usize, f64)], n: &Vec3) -> Vec<f64> {
        let mut per_joint: Vec<(usize, Matrix3x4<f64>)> = Vec::new();
        for &(v, c) in terms {
            let x = &self.rest[v];
            let outer = n * Vector4::new(x.x, x.y, x.z, 1.0).transpose();
            for &(j, w) in self.body.weights.vertex(v) {
                match per_joint.iter_mut().find(|(k, _)| *k == j) {
                    Some((_, m)) => *m += outer * (c * w),
                    None => per_joint.push((j, outer * (c * w))),
                }
            }
        }
        let mut row = vec![0.0; self.joint.len()];
        for (j, m) in &per_joint {
            for &k in &self.moving[*j] {
                row[k] += self.joint[k][*j].dot(m);
            }
        }
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::PartMap;
    use crate::posefix::benchmark::Benchmark;

    /// ∂x/∂θ agrees with central differences of the skinned vertices.
    #[test]
    fn skinning_derivatives_match_finite_differences() {
        let body = Body::makehuman().unwrap();
        let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
        let limits = JointLimits::shipped(&body, &space, 0.1).unwrap();
        let pose = Benchmark::cmu_01_03()
            .unwrap()
            .poses(&body, &space, &limits)
            .unwrap()
            .remove(0);
        let derivatives = SkinningDerivatives::new(&body, &space, &pose).unwrap();
        let theta = space.encode(&pose).unwrap();
        // The per-joint directional form equals the per-vertex sum.
        let n = Vec3::new(0.3, -0.8, 0.52).normalize();
        let terms = [(4000, 1.0), (4001, -0.25), (9000, -0.75)];
        let row = derivatives.directional(&terms, &n);
        for (k, value) in row.iter().enumerate() {
            let direct: f64 = terms
                .iter()
                .map(|&(v, c)| c * derivatives.vertex(v)[k].dot(&n))
                .sum();
            assert!((value - direct).abs() < 1e-12, "θ_{k}: {value} vs {direct}");
        }
        let h = 1e-5;
        for &v in &[0, 4000, 9000] {
            let analytic = derivatives.vertex(v);
            for k in [0, 17, 60, 100, theta.len() - 1] {
                let mut probe = theta.clone();
                probe[k] += h;
                let plus = body.posed_vertices(&space.decode(&probe, &pose).unwrap())[v];
                probe[k] -= 2.0 * h;
                let minus = body.posed_vertices(&space.decode(&probe, &pose).unwrap())[v];
                let numeric = (plus - minus) / (2.0 * h);
                assert!(
                    (numeric - analytic[k]).norm() < 1e-6 * (1.0 + numeric.norm()),
                    "vertex {v}, θ_{k}: {numeric:?} vs {:?}",
                    analytic[k]
                );
            }
        }
    }

    /// Benchmark poses (colliding by the exact label) come out collision-free,
    /// moved a little; a pose that does not collide is left as it is; bad
    /// options are an error.
    #[test]
    fn repairs_benchmark_poses_and_leaves_free_poses_alone() {
        let body = Body::makehuman().unwrap();
        let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
        let limits = JointLimits::shipped(&body, &space, 0.1).unwrap();
        let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
        let distance = PoseDistance::new(&space, &body.skeleton, true);
        let repair = DirectRepair::new(&body, &label, &space, &distance, &limits).unwrap();
        let poses = Benchmark::cmu_01_03()
            .unwrap()
            .poses(&body, &space, &limits)
            .unwrap();
        let options = DirectOptions::default();
        // A hand in the thigh, the feet in each other, an arm in the back,
        // both feet and a foot in the other shin.
        let mut pairs = Vec::new();
        for index in [6, 107, 122, 169] {
            let pose = &poses[index];
            let before = label.label(pose, false).unwrap();
            assert!(before.collides());
            pairs.extend(before.parts);
            let fixed = repair.repair(pose, &options).unwrap();
            assert!(fixed.free, "benchmark pose {index} still collides");
            assert!(!label.label(&fixed.pose, true).unwrap().collides());
            let (x0, x1) = (body.posed_vertices(pose), body.posed_vertices(&fixed.pose));
            let moved =
                x0.iter().zip(&x1).map(|(a, b)| (a - b).norm()).sum::<f64>() / x0.len() as f64;
            assert!(moved < 0.05, "pose {index}: mean vertex move {moved} m");
            // Free now, so repairing again changes nothing.
            let again = repair.repair(&fixed.pose, &options).unwrap();
            assert_eq!(again.theta, space.encode(&fixed.pose).unwrap());
            assert_eq!(again.iterations, 0);
        }
        // Both kinds of benchmark collision were among them.
        let has = |part: &str| {
            pairs
                .iter()
                .any(|(a, b)| a.contains(part) || b.contains(part))
        };
        assert!(has("Foot") && has("Arm"), "{pairs:?}");
        // CMU 01_01 frame 295 (the right upper arm in the lower back).
        let weighted_only = DirectOptions {
            retry_unweighted: false,
            ..DirectOptions::default()
        };
        let motion = crate::motion::Motion::load(std::path::Path::new("01_01"), &body).unwrap();
        assert!(label.label(&motion.frames[295], false).unwrap().collides());
        let fixed = repair.repair(&motion.frames[295], &weighted_only).unwrap();
        assert!(fixed.free, "01_01 frame 295 still collides");
        // Both feet and a foot in the other shin (benchmark pose 169): the
        // weighted descent aiming for 3 mm stalls; the unweighted retry
        // aiming for 1 cm frees it.
        let narrow = DirectOptions {
            retry_clearance: None,
            ..DirectOptions::default()
        };
        assert!(!repair.repair(&poses[169], &weighted_only).unwrap().free);
        assert!(!repair.repair(&poses[169], &narrow).unwrap().free);
        let bad = DirectOptions {
            max_move: 0.0,
            ..DirectOptions::default()
        };
        assert!(repair.repair(&poses[0], &bad).is_err());
    }
}

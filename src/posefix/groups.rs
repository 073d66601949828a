//! A collision field factored by part pairs: g(θ) = min_k g_k(θ_k), one
//! field per group of part pairs, each fed only the joints its pairs
//! depend on (θ_k, the 6D rotations of those joints).
//!
//! Whether the two feet intersect depends on the legs' rotations alone; a
//! field over the whole pose space has to learn that the arms do not
//! matter for it from examples, and one clip does not show every
//! combination. A group's field sees no joint its pairs do not depend on,
//! so nothing it learns about the legs changes when the arms move, and its
//! gradient moves only joints that can separate its parts.
//!
//! **The joints of a pair.** For parts a and b, B_a is the set of bones
//! that carry at least half the skinning weight of some vertex of a's
//! faces (the bones that drive it; the smaller weights blended in near a
//! joint are left out: they would tie the legs to the spine), likewise
//! B_b. A
//! joint moves a against b when it is a bone of B_a ∪ B_b or one of their
//! ancestors, unless it is a strict ancestor of every bone in B_a ∪ B_b
//! (then it turns both parts rigidly together). A group's joints are the
//! union over its pairs, in the pose space's order.
//!
//! **Groups.** The config lists groups as parts and the parts they are
//! tested against; every pair the part map tests belongs to the first group
//! that matches it, and a pair no group matches is an error: a field that
//! never saw a pair would call all its collisions free.
//!
//! On disk: `groups.ron` ([`GroupsInfo`]) beside one ordinary field
//! directory per group ([`super::field::CollisionField`], its own pose
//! space).

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::field::{CollisionField, PoseField};
use super::space::{DIMS_PER_JOINT, JointLimits, PoseSpace};
use crate::atomic_file::write_bytes_atomic;
use crate::body::{Body, BodyParts, PartMap};
use crate::ron_file::read_ron;
use crate::{Error, Result};

/// One group of part pairs in the config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairGroupConfig {
    /// Name; also the group's subdirectory.
    pub name: String,
    /// Parts (names of the part map) on one side of the pairs.
    pub parts: Vec<String>,
    /// Parts on the other side; `None`: any part.
    #[serde(default)]
    pub against: Option<Vec<String>>,
    /// Contact paths drawn for this group's field instead of
    /// `data.contacts.paths` (0: none); `None`: the data config's. For a
    /// group whose pairs the captured frames hold far apart (the trunk
    /// against the legs), most paths run to `max_steps` without contact,
    /// each step labelled.
    #[serde(default)]
    pub contact_paths: Option<usize>,
}

/// A group with its pairs and joints resolved on one body.
#[derive(Clone, Debug, PartialEq)]
pub struct PairGroup {
    /// Name.
    pub name: String,
    /// Part pairs (indices into [`BodyParts`], a < b).
    pub pairs: Vec<(usize, usize)>,
    /// The pose-space joints the pairs depend on, in the space's order.
    pub joints: Vec<String>,
}

/// A bone drives a vertex when it carries at least this share of its weight.
const DRIVING_WEIGHT: f64 = 0.5;

/// Bones driving some vertex of each part's faces.
fn part_bones(body: &Body, parts: &BodyParts) -> Vec<BTreeSet<usize>> {
    let mut bones = vec![BTreeSet::new(); parts.len()];
    for (face, &part) in body.mesh.faces.iter().zip(&parts.face_part) {
        for &v in face {
            for &(j, w) in body.weights.vertex(v) {
                if w >= DRIVING_WEIGHT {
                    bones[part].insert(j);
                }
            }
        }
    }
    bones
}

/// `j` and its ancestors.
fn with_ancestors(body: &Body, j: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut k = Some(j);
    while let Some(i) = k {
        out.insert(i);
        k = body.skeleton.parents[i];
    }
    out
}

/// The skeleton joints that move parts with bones `a` against parts with
/// bones `b` (see the module documentation).
fn moving_joints(body: &Body, a: &BTreeSet<usize>, b: &BTreeSet<usize>) -> BTreeSet<usize> {
    let all: BTreeSet<usize> = a.union(b).copied().collect();
    let mut moving = BTreeSet::new();
    let mut common: Option<BTreeSet<usize>> = None;
    for &bone in &all {
        let chain = with_ancestors(body, bone);
        let mut strict = chain.clone();
        strict.remove(&bone);
        common = Some(match common {
            None => strict,
            Some(c) => c.intersection(&strict).copied().collect(),
        });
        moving.extend(chain);
    }
    let common = common.unwrap_or_default();
    moving.difference(&common).copied().collect()
}

/// Resolves `configs` on `body` with the part map `map`: every pair the map
/// tests goes to the first group that matches it. Unknown part names, an
/// empty group and a pair no group matches are errors naming them.
pub fn resolve_groups(
    body: &Body,
    map: &PartMap,
    space: &PoseSpace,
    configs: &[PairGroupConfig],
) -> Result<Vec<PairGroup>> {
    let parts = BodyParts::new(body, map)?;
    let index = |group: &str, name: &str| {
        parts.index_of(name).ok_or_else(|| {
            Error::invalid(format!(
                "pair group {group:?}: no body part {name:?} (parts: {})",
                parts.names.join(", ")
            ))
        })
    };
    let mut sides = Vec::new();
    for g in configs {
        let a = g
            .parts
            .iter()
            .map(|n| index(&g.name, n))
            .collect::<Result<BTreeSet<usize>>>()?;
        let b = match &g.against {
            Some(list) => Some(
                list.iter()
                    .map(|n| index(&g.name, n))
                    .collect::<Result<BTreeSet<usize>>>()?,
            ),
            None => None,
        };
        sides.push((a, b));
    }
    let matches = |(a, b): &(BTreeSet<usize>, Option<BTreeSet<usize>>), p: usize, q: usize| {
        let on = |x: usize, y: usize| a.contains(&x) && b.as_ref().is_none_or(|b| b.contains(&y));
        on(p, q) || on(q, p)
    };
    let mut pairs = vec![Vec::new(); configs.len()];
    let mut uncovered = Vec::new();
    for p in 0..parts.len() {
        for q in p + 1..parts.len() {
            if !parts.may_collide(p, q) {
                continue;
            }
            match sides.iter().position(|s| matches(s, p, q)) {
                Some(k) => pairs[k].push((p, q)),
                None => uncovered.push(format!("{}–{}", parts.names[p], parts.names[q])),
            }
        }
    }
    if !uncovered.is_empty() {
        return Err(Error::invalid(format!(
            "pair groups: no group holds the part pairs {}",
            uncovered.join(", ")
        )));
    }
    let bones = part_bones(body, &parts);
    configs
        .iter()
        .zip(pairs)
        .map(|(g, pairs)| {
            if pairs.is_empty() {
                return Err(Error::invalid(format!(
                    "pair group {:?} holds no pair (earlier groups took them all, or its parts never collide)",
                    g.name
                )));
            }
            let mut moving = BTreeSet::new();
            for &(p, q) in &pairs {
                moving.extend(moving_joints(body, &bones[p], &bones[q]));
            }
            let joints: Vec<String> = space
                .joints
                .iter()
                .zip(&space.names)
                .filter(|(j, _)| moving.contains(j))
                .map(|(_, n)| n.clone())
                .collect();
            if joints.is_empty() {
                return Err(Error::invalid(format!(
                    "pair group {:?}: no joint of the pose space moves its parts",
                    g.name
                )));
            }
            Ok(PairGroup {
                name: g.name.clone(),
                pairs,
                joints,
            })
        })
        .collect()
}

impl PairGroup {
    /// The part map that tests only this group's pairs.
    pub fn part_map(&self, body: &Body, map: &PartMap) -> Result<PartMap> {
        let parts = BodyParts::new(body, map)?;
        let mut out = map.clone();
        for p in 0..parts.len() {
            for q in p + 1..parts.len() {
                if parts.may_collide(p, q) && !self.pairs.contains(&(p, q)) {
                    out.excluded
                        .push((parts.names[p].clone(), parts.names[q].clone()));
                }
            }
        }
        Ok(out)
    }

    /// The group's pose space (its joints).
    pub fn space(&self, body: &Body) -> Result<PoseSpace> {
        let names: Vec<&str> = self.joints.iter().map(String::as_str).collect();
        PoseSpace::new(&body.skeleton, &names)
    }

    /// `limits` (of the whole space) restricted to the group's joints.
    pub fn limits(&self, limits: &JointLimits) -> Result<JointLimits> {
        let joints = self
            .joints
            .iter()
            .map(|name| {
                limits
                    .joints
                    .iter()
                    .find(|(n, _, _)| n == name)
                    .cloned()
                    .ok_or_else(|| {
                        Error::invalid(format!("joint limits: no limits for joint {name:?}"))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(JointLimits { joints })
    }
}

/// `groups.ron`: the whole pose space and the groups, each a field
/// directory of its name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupsInfo {
    /// The whole pose space's joints, in θ order.
    pub joints: Vec<String>,
    /// (group name, its joints).
    pub groups: Vec<(String, Vec<String>)>,
}

impl GroupsInfo {
    /// Writes `dir/groups.ron`.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let text = ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default())
            .map_err(|e| Error::invalid(format!("cannot serialise groups.ron: {e}")))?;
        write_bytes_atomic(&dir.join("groups.ron"), text.as_bytes())
    }
}

/// One group's field and where its joints sit in the whole θ.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupMember {
    /// The group's name.
    pub name: String,
    /// Its field, over its own joints.
    pub field: CollisionField,
    /// Index into the whole θ of each of its field's inputs.
    pub dims: Vec<usize>,
}

/// g(θ) = min over the groups of g_k(θ_k).
#[derive(Clone, Debug, PartialEq)]
pub struct GroupedField {
    /// The whole pose space's joints.
    pub joints: Vec<String>,
    /// The groups.
    pub members: Vec<GroupMember>,
}

impl GroupedField {
    /// Assembles the groups' fields over the whole space's `joints`; a
    /// field over a joint the space lacks is an error.
    pub fn new(joints: Vec<String>, fields: Vec<(String, CollisionField)>) -> Result<Self> {
        let members = fields
            .into_iter()
            .map(|(name, field)| {
                let mut dims = Vec::new();
                for joint in &field.info.joints {
                    let k = joints.iter().position(|j| j == joint).ok_or_else(|| {
                        Error::invalid(format!(
                            "grouped field: group {name:?} has joint {joint:?}, not in the pose space"
                        ))
                    })?;
                    dims.extend(DIMS_PER_JOINT * k..DIMS_PER_JOINT * (k + 1));
                }
                Ok(GroupMember { name, field, dims })
            })
            .collect::<Result<Vec<_>>>()?;
        if members.is_empty() {
            return Err(Error::invalid("grouped field: no group"));
        }
        Ok(GroupedField { joints, members })
    }

    /// Reads a directory holding `groups.ron` and one field per group.
    pub fn load(dir: &Path) -> Result<Self> {
        let info: GroupsInfo = read_ron(&dir.join("groups.ron"))?;
        let mut fields = Vec::new();
        for (name, joints) in &info.groups {
            let field = CollisionField::load(&dir.join(name))?;
            if &field.info.joints != joints {
                return Err(Error::parse(
                    dir.join("groups.ron"),
                    format!(
                        "group {name:?} lists joints {joints:?}, its field has {:?}",
                        field.info.joints
                    ),
                ));
            }
            fields.push((name.clone(), field));
        }
        GroupedField::new(info.joints, fields)
    }

    fn slice(&self, member: &GroupMember, theta: &[f64]) -> Vec<f64> {
        member.dims.iter().map(|&i| theta[i]).collect()
    }

    /// Each group's g_k(θ_k), in order.
    pub fn values(&self, theta: &[f64]) -> Vec<f64> {
        self.members
            .iter()
            .map(|m| m.field.value(&self.slice(m, theta)))
            .collect()
    }
}

impl PoseField for GroupedField {
    fn dims(&self) -> usize {
        DIMS_PER_JOINT * self.joints.len()
    }

    fn value(&self, theta: &[f64]) -> f64 {
        self.values(theta).into_iter().fold(f64::INFINITY, f64::min)
    }

    /// The value and gradient of the lowest group (ties: the first).
    fn value_and_gradient(&self, theta: &[f64]) -> (f64, Vec<f64>) {
        let values = self.values(theta);
        let k = (0..values.len())
            .min_by(|&a, &b| values[a].total_cmp(&values[b]))
            .unwrap_or(0);
        let (g, grad) = self.constraint(k, theta, true);
        (g, grad.expect("asked for the gradient"))
    }

    fn constraint_count(&self) -> usize {
        self.members.len()
    }

    /// Group k's g_k(θ_k), its gradient scattered into the whole θ (zero on
    /// the joints the group does not see).
    fn constraint(&self, k: usize, theta: &[f64], gradient: bool) -> (f64, Option<Vec<f64>>) {
        let member = &self.members[k];
        let slice = self.slice(member, theta);
        if !gradient {
            return (member.field.value(&slice), None);
        }
        let (g, grad) = member.field.value_and_gradient(&slice);
        let mut full = vec![0.0; self.dims()];
        for (&i, d) in member.dims.iter().zip(grad) {
            full[i] = d;
        }
        (g, Some(full))
    }

    fn check_for(&self, body: &Body, space: &PoseSpace) -> Result<()> {
        if self.joints != space.names {
            return Err(Error::invalid(format!(
                "the grouped collision field's pose space has joints {:?}, this one {:?}",
                self.joints, space.names
            )));
        }
        for m in &self.members {
            let sub: Vec<&str> = m.field.info.joints.iter().map(String::as_str).collect();
            m.field
                .check_for(body, &PoseSpace::new(&body.skeleton, &sub)?)?;
        }
        Ok(())
    }
}

/// The field in `dir`: a grouped one when it holds `groups.ron`, else one
/// network over the whole space.
pub fn load_field(dir: &Path) -> Result<Box<dyn PoseField>> {
    if dir.join("groups.ron").is_file() {
        Ok(Box::new(GroupedField::load(dir)?))
    } else {
        Ok(Box::new(CollisionField::load(dir)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::posefix::field::tests::random_field;

    fn named(mut field: CollisionField, joints: &[&str]) -> CollisionField {
        field.info.joints = joints.iter().map(|s| s.to_string()).collect();
        field
    }

    #[test]
    fn grouped_value_is_the_minimum_and_its_gradient_matches_finite_differences() {
        let joints: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let f1 = named(random_field(&[12, 10, 1], 1), &["a", "c"]);
        let f2 = named(random_field(&[6, 10, 1], 2), &["b"]);
        let grouped = GroupedField::new(
            joints,
            vec![("x".into(), f1.clone()), ("y".into(), f2.clone())],
        )
        .unwrap();
        let theta: Vec<f64> = (0..18).map(|i| (i as f64 * 0.7).cos() * 0.5).collect();
        let ac: Vec<f64> = theta[0..6].iter().chain(&theta[12..18]).copied().collect();
        let b = theta[6..12].to_vec();
        let expect = f1.value(&ac).min(f2.value(&b));
        assert!((grouped.value(&theta) - expect).abs() < 1e-14);
        let (g, grad) = grouped.value_and_gradient(&theta);
        assert!((g - expect).abs() < 1e-14);
        // The lowest group's gradient; zero on the joints it does not see.
        let h = 1e-6;
        for i in 0..18 {
            let mut p = theta.clone();
            p[i] += h;
            let mut m = theta.clone();
            m[i] -= h;
            let fd = (grouped.value(&p) - grouped.value(&m)) / (2.0 * h);
            assert!(
                (fd - grad[i]).abs() < 1e-6 * (1.0 + fd.abs()),
                "∂g/∂θ{i}: {} vs {fd}",
                grad[i]
            );
        }
        let unknown = named(random_field(&[6, 4, 1], 3), &["z"]);
        let err = GroupedField::new(vec!["a".into()], vec![("z".into(), unknown)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"z\""), "{err}");
    }

    #[test]
    fn leg_pairs_depend_on_the_leg_joints_only_and_every_pair_needs_a_group() {
        let body = Body::makehuman().unwrap();
        let map = PartMap::cmu_mb().unwrap();
        let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
        let legs: Vec<String> = [
            "LeftUpLeg",
            "LeftLeg",
            "LeftFootPart",
            "RightUpLeg",
            "RightLeg",
            "RightFootPart",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let configs = vec![
            PairGroupConfig {
                name: "legs".into(),
                parts: legs.clone(),
                against: Some(legs.clone()),
                contact_paths: None,
            },
            PairGroupConfig {
                name: "rest".into(),
                parts: BodyParts::new(&body, &map).unwrap().names,
                against: None,
                contact_paths: None,
            },
        ];
        let groups = resolve_groups(&body, &map, &space, &configs).unwrap();
        assert!(!groups[0].pairs.is_empty());
        for joint in &groups[0].joints {
            assert!(
                joint.contains("Leg") || joint.contains("Foot") || joint.contains("Toe"),
                "the legs' pairs depend on {joint}: {:?}",
                groups[0].joints
            );
        }
        assert!(groups[0].joints.contains(&"LeftFoot".to_string()));
        // A hand against the head depends on the arm and the neck, not the legs.
        assert!(groups[1].joints.iter().any(|j| j == "LeftForeArm"));
        assert_eq!(groups[0].joints.len(), 8, "{:?}", groups[0].joints);
        // The group's part map tests only its pairs.
        let legs_map = groups[0].part_map(&body, &map).unwrap();
        let parts = BodyParts::new(&body, &legs_map).unwrap();
        let (lf, rf) = (
            parts.index_of("LeftFootPart").unwrap(),
            parts.index_of("RightFootPart").unwrap(),
        );
        assert!(parts.may_collide(lf, rf));
        let hand = parts.index_of("LeftHandPart").unwrap();
        let spine = parts.index_of("Spine1").unwrap();
        assert!(!parts.may_collide(hand, spine));
        // Without the catch-all group the arms' pairs have no group.
        let err = resolve_groups(&body, &map, &space, &configs[..1])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no group holds"), "{err}");
        let bad = vec![PairGroupConfig {
            name: "x".into(),
            parts: vec!["Tail".into()],
            against: None,
            contact_paths: None,
        }];
        let err = resolve_groups(&body, &map, &space, &bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Tail"), "{err}");
    }
}

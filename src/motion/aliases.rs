//! Common names of humanoid joints, matched to the `cmu_mb` rig's.
//!
//! Exporters name the same joint differently: `LeftUpLeg`, `LeftHip`,
//! `lThigh`, `thigh.L`, `mixamorig:LeftUpLeg`, `L UpperArm`, … A source joint
//! that the joint map does not name and that is not a rig joint itself is
//! looked up here: its name is split into words (at `_ . : -`, spaces and
//! case changes), a namespace such as `mixamorig` or `Bip01` is dropped, the
//! side is read from a leading or trailing `Left`/`L`/`Right`/`R`, and the
//! rest is compared with the aliases of each rig joint.

/// Aliases (lower case, words joined) of the rig joints without a side.
const CENTRE: &[(&str, &[&str])] = &[
    ("Hips", &["hips", "hip", "pelvis"]),
    ("Spine", &["spine", "spine0", "abdomen", "torso", "waist"]),
    (
        "Spine1",
        &[
            "spine1",
            "chest",
            "spine2",
            "upperchest",
            "chest2",
            "spine3",
        ],
    ),
    ("Neck", &["neck", "neck0"]),
    ("Head", &["head"]),
];

/// Aliases of the rig joints that come in a left and a right version; the
/// rig name is `Left`/`Right` + the first entry.
const SIDED: &[(&str, &[&str])] = &[
    ("Shoulder", &["shoulder", "collar", "clavicle", "clav"]),
    ("Arm", &["arm", "upperarm", "shldr", "uparm", "humerus"]),
    ("ForeArm", &["forearm", "elbow", "lowerarm", "loarm"]),
    ("Hand", &["hand", "wrist"]),
    ("UpLeg", &["upleg", "hip", "thigh", "upperleg"]),
    ("Leg", &["leg", "knee", "shin", "lowerleg", "calf", "loleg"]),
    ("Foot", &["foot", "ankle"]),
    ("ToeBase", &["toebase", "toe", "toes", "toe0", "ball"]),
];

/// Name prefixes of exporters' namespaces, dropped before matching.
const NAMESPACES: &[&str] = &[
    "mixamorig",
    "bip01",
    "bip001",
    "biped",
    "character",
    "armature",
];

/// Left or right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// Splits a joint name into lower-case words at separators and at case
/// changes: before an upper-case letter that follows a lower-case one or a
/// digit, and before the last of a run of capitals followed by a lower-case
/// letter (`LeftUpLeg` → left, up, leg; `LThigh` → l, thigh; `lShldr` → l, shldr).
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let boundary = c.is_uppercase()
            && previous.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The rig joint a source joint name most likely means, if any.
pub fn rig_joint_for(name: &str) -> Option<String> {
    let mut words = words(name);
    while words
        .first()
        .is_some_and(|w| NAMESPACES.contains(&w.as_str()))
    {
        words.remove(0);
    }
    let side_of = |w: &str| match w {
        "left" | "l" => Some(Side::Left),
        "right" | "r" => Some(Side::Right),
        _ => None,
    };
    let mut side = None;
    if let Some(s) = words.first().and_then(|w| side_of(w)) {
        side = Some(s);
        words.remove(0);
    } else if let Some(s) = words.last().and_then(|w| side_of(w)) {
        side = Some(s);
        words.pop();
    }
    let joined: String = words.concat();
    if joined.is_empty() {
        return None;
    }
    match side {
        None => CENTRE
            .iter()
            .find(|(_, aliases)| aliases.contains(&joined.as_str()))
            .map(|(rig, _)| rig.to_string()),
        Some(side) => SIDED
            .iter()
            .find(|(_, aliases)| aliases.contains(&joined.as_str()))
            .map(|(rig, _)| match side {
                Side::Left => format!("Left{rig}"),
                Side::Right => format!("Right{rig}"),
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_exporter_names_find_the_rig_joint() {
        for (source, rig) in [
            ("Hips", "Hips"),
            ("pelvis", "Hips"),
            ("mixamorig:LeftUpLeg", "LeftUpLeg"),
            ("LeftHip", "LeftUpLeg"),
            ("lThigh", "LeftUpLeg"),
            ("LThigh", "LeftUpLeg"),
            ("thigh_r", "RightUpLeg"),
            ("RightKnee", "RightLeg"),
            ("lShin", "LeftLeg"),
            ("LeftAnkle", "LeftFoot"),
            ("LeftToe", "LeftToeBase"),
            ("RightToes", "RightToeBase"),
            ("Spine2", "Spine1"),
            ("Chest", "Spine1"),
            ("LeftCollar", "LeftShoulder"),
            ("L Clavicle", "LeftShoulder"),
            ("lShldr", "LeftArm"),
            ("upperarm.R", "RightArm"),
            ("RightElbow", "RightForeArm"),
            ("Bip01 L Forearm", "LeftForeArm"),
            ("LeftWrist", "LeftHand"),
            ("Head", "Head"),
        ] {
            assert_eq!(rig_joint_for(source).as_deref(), Some(rig), "{source}");
        }
        for unknown in ["LeftEye", "Tail", "", "L", "HeadTop_End"] {
            assert_eq!(rig_joint_for(unknown), None, "{unknown}");
        }
    }
}

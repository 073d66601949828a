//! What every template builder returns before skinning weights are attached:
//! the rest mesh, its named boundary loops and the pinned vertices.

use crate::mesh::{Topology, TriMesh};
use crate::{Error, Result, Vec3};

/// A boundary loop with a name a config can refer to ("waist", "hem", …).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedLoop {
    /// The loop's name, unique within its garment.
    pub name: String,
    /// Ordered vertex cycle, oriented like the faces (see [`Topology::boundary_loops`]).
    pub vertices: Vec<usize>,
}

/// Rest geometry of a garment without weights.
#[derive(Clone, Debug)]
pub struct Template {
    /// Rest mesh in metres, counter-clockwise seen from outside.
    pub mesh: TriMesh,
    /// Named boundary loops.
    pub loops: Vec<NamedLoop>,
    /// Vertices that follow the body (skinned) instead of being simulated.
    pub pinned: Vec<usize>,
}

/// Flips every face if the normals point inwards on average, measured as
/// Σ_f n_f · (c_f − c) with c_f the face centroid and c the mesh centroid:
/// positive for outward normals on tube-like shells around the body.
pub fn orient_outward(mesh: &mut TriMesh) {
    let Some(centre) = centroid(&mesh.positions) else {
        return;
    };
    let outwardness: f64 = (0..mesh.num_faces())
        .map(|f| {
            let [a, b, c] = mesh.triangle(f);
            mesh.face_normal_scaled(f)
                .dot(&((a + b + c) / 3.0 - centre))
        })
        .sum();
    if outwardness < 0.0 {
        for face in &mut mesh.faces {
            face.swap(1, 2);
        }
    }
}

/// Mean of the points, `None` when empty.
pub fn centroid(points: &[Vec3]) -> Option<Vec3> {
    (!points.is_empty()).then(|| points.iter().sum::<Vec3>() / points.len() as f64)
}

/// The boundary loops of `mesh`, checked to number `expected`.
pub fn boundary_loops(mesh: &TriMesh, expected: usize, what: &str) -> Result<Vec<Vec<usize>>> {
    let loops = Topology::new(mesh).boundary_loops().to_vec();
    if loops.len() != expected {
        return Err(Error::invalid(format!(
            "{what}: expected {expected} boundary loops, found {}",
            loops.len()
        )));
    }
    Ok(loops)
}

/// Mean position of a loop's vertices.
pub fn loop_centre(mesh: &TriMesh, vertices: &[usize]) -> Vec3 {
    let points: Vec<Vec3> = vertices.iter().map(|&v| mesh.positions[v]).collect();
    centroid(&points).unwrap_or_else(Vec3::zeros)
}

/// A loop name and the score of a loop centre for it.
pub type LoopRule<'a> = (&'a str, fn(Vec3) -> f64);

/// Names the loops: `rules` pairs a name with a score; each name in turn
/// takes the remaining loop with the highest score of its loop centre.
pub fn name_loops(
    mesh: &TriMesh,
    mut loops: Vec<Vec<usize>>,
    rules: &[LoopRule],
) -> Vec<NamedLoop> {
    let mut named = Vec::new();
    for (name, score) in rules {
        let best = (0..loops.len()).max_by(|&i, &j| {
            score(loop_centre(mesh, &loops[i])).total_cmp(&score(loop_centre(mesh, &loops[j])))
        });
        if let Some(best) = best {
            named.push(NamedLoop {
                name: (*name).to_owned(),
                vertices: loops.swap_remove(best),
            });
        }
    }
    named
}

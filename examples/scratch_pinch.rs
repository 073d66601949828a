use senc::body::Body;
use senc::body::query::BodyQuery;
use senc::mesh::ply::read_ply;
use senc::motion::Motion;
use std::collections::BTreeMap;
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let body = Body::makehuman().unwrap();
    let motion = Motion::builtin("01_01", &body).unwrap();
    for frame in 40..60 {
        let g = read_ply(std::path::Path::new(&format!("{dir}/frame_{frame:05}.ply"))).unwrap().mesh;
        let posed = body.posed_mesh(&motion.frames[frame]);
        let q = BodyQuery::new(&posed).unwrap();
        let mut joints: BTreeMap<String, usize> = BTreeMap::new();
        let (mut pen, mut buried) = (0, 0);
        for p in &g.positions {
            let c = q.closest(p);
            if c.signed_distance >= 0.0 { continue; }
            pen += 1;
            let probe = c.point + 0.002 * c.face_normal;
            if q.signed_distance(&probe) < 0.0 { buried += 1; }
            let f = q.faces()[c.face];
            let mut w: BTreeMap<usize, f64> = BTreeMap::new();
            for v in f { for &(j, x) in body.weights.vertex(v) { *w.entry(j).or_default() += x; } }
            let j = w.iter().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
            *joints.entry(body.skeleton.names[*j].clone()).or_default() += 1;
        }
        println!("frame {frame}: {pen} penetrating ({:.2} %), {buried} whose closest body point is itself inside the body; joints {joints:?}", 100.0 * pen as f64 / g.positions.len() as f64);
    }
}

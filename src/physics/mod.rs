//! Physics of the garment: materials, the self-supervised energies with
//! analytic gradients (DESIGN §3), and the reference implicit solver.
//!
//! One energy per file, all behind the [`Energy`] trait:
//! [`Stretch`] (StVK), [`Bend`] (dihedral), [`Inertia`], [`Gravity`],
//! [`ExternalForce`], [`BodyCollision`], [`Friction`], and the optional
//! [`Floor`] and [`StrainLimit`] (not in DESIGN). A [`Cloth`] holds the
//! rest-shape precomputation of a garment; a [`Step`] assembles one step's
//! incremental potential as an [`EnergySum`], which reports per-term values.
//! The self-collision volume (DESIGN §4) enters the same sum as one more
//! boxed term, [`SelfCollisionEnergy`] ([`EnergySum::push_boxed`],
//! [`ReferenceSolver::with_term`]).
//!
//! [`project_out`] moves a step's vertices that end inside the body's
//! collision margin back out to it, and [`StrainProjection`] shortens the
//! edges a step overstretched (a learned step's optional last stages).
//!
//! The reference solver that minimises those sums, and the runners built
//! on it, are the [`solver`] submodule.

pub mod bend;
pub mod body_collision;
pub mod cloth;
pub mod config;
pub mod contact_projection;
pub mod energy;
pub mod external;
pub mod floor;
pub mod friction;
pub mod gravity;
pub mod hessian;
pub mod inertia;
pub mod material;
pub mod membrane_relaxation;
pub mod self_collision_term;
pub mod solver;
pub mod strain_limit;
pub mod strain_projection;
pub mod stretch;
pub mod triangle_strain;

pub use bend::{Bend, BendRest};
pub use body_collision::{
    BodyCollision, BodyContact, ContactSearch, body_contacts, contacts_inside,
    tracked_body_contacts,
};
pub use cloth::{BodyMotion, Cloth, Step};
pub use config::{PhysicsConfig, SolverConfig, SolverMethod};
pub use contact_projection::{ProjectedStep, project_out};
pub use energy::{Energy, EnergySum, Evaluation, TermValue};
pub use external::ExternalForce;
pub use floor::Floor;
pub use friction::{Friction, FrictionConfig};
pub use gravity::Gravity;
pub use hessian::Hessian;
pub use inertia::{Inertia, lumped_masses};
pub use material::Material;
pub use membrane_relaxation::{BlockProjection, MembraneRelaxation, MembraneRelaxationConfig};
pub use self_collision_term::SelfCollisionEnergy;
pub use solver::drape::{DrapeConfig, DrapeReport, static_drape};
pub use solver::{ClothState, ReferenceSolver, StepReport};
pub use strain_limit::{StrainLimit, StrainLimitConfig};
pub use strain_projection::{StrainElements, StrainProjection, StrainProjectionConfig};
pub use stretch::Stretch;

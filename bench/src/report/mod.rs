//! What a run measured and how it is shown: the leaves every measurement uses (`text`:
//! tables and sizes; `chart`: the plots' vocabulary; `stats`: medians and ratios), then the
//! report itself (`results`: [`Report`], its JSON, text and markdown) and which plots it
//! writes (`plot`).

pub mod chart;
pub mod plot;
mod results;
pub mod stats;
pub mod text;

pub use results::Report;

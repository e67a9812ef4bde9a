//! The feed read's statements and rows: each statement a step of `domain::read` describes, as
//! SQL on its database (`store` builders), and each answer as the rows the read takes back.

use worker::{D1PreparedStatement, D1Result};

use crate::context::Ctx;
use crate::domain::ids::UserId;
use crate::domain::read::{Rows, SlabRows, Statement};
use crate::error::ApiResult;
use crate::store::feed as pull;
use crate::store::liked;
use crate::store::posts::{self, AuthorRelationship, PostRow};
use crate::store::AnyDb;

/// The statement `statement` describes, on `db`, for `viewer`. The reader's own rows (edges,
/// activation) are on their home database, which the read's plan puts them in the batch of.
pub fn prepare(
    ctx: &Ctx,
    db: AnyDb<'_>,
    viewer: UserId,
    statement: &Statement,
) -> ApiResult<D1PreparedStatement> {
    Ok(match statement {
        Statement::Edges { list } => pull::edges_statement(ctx.user_db(viewer), viewer, *list),
        Statement::Activate => pull::activate_statement(ctx.user_db(viewer), viewer, ctx.now),
        Statement::Pulled { authors, bounds } => pull::pulled_statement(db, viewer, authors, *bounds),
        Statement::InFlight { reads, bounds } => pull::in_flight_statement(db, viewer, reads, *bounds),
        Statement::Hydrate { ids } => posts::feed_live_statement(db, viewer, ids),
        Statement::Relationships { authors } => posts::relationships(db, viewer, authors),
        Statement::HotAuthors { authors } => {
            pull::hot_authors_among(db, authors, ctx.config.hot_min_followers)
        }
        Statement::HotRange { author, below } => {
            pull::hot_range(db, *author, *below, ctx.config.hot_range_len)
        }
        Statement::Slab(slab) => pull::slab_statement(db, viewer, slab),
        Statement::LikedIn { lo, hi } => liked::liked_in_statement(ctx.user_db(viewer), viewer, (*lo, *hi)),
    }?)
}

#[derive(serde::Deserialize)]
struct HotAuthor {
    id: UserId,
    n: i64,
}

/// What `statement` answered.
pub fn rows(statement: &Statement, result: &D1Result) -> ApiResult<Rows<PostRow>> {
    Ok(match statement {
        Statement::Edges { .. } => Rows::Edges(pull::edges_of(result)?),
        Statement::Activate => Rows::Done,
        Statement::Pulled { .. } | Statement::InFlight { .. } | Statement::Hydrate { .. } => {
            Rows::Posts(result.results()?)
        }
        Statement::Slab(slab) if slab.rows == SlabRows::Posts => Rows::Posts(result.results()?),
        Statement::Slab(_) | Statement::HotRange { .. } => Rows::Entries(result.results()?),
        Statement::Relationships { .. } => Rows::Relationships(
            result.results::<AuthorRelationship>()?.iter().map(AuthorRelationship::relation).collect(),
        ),
        Statement::LikedIn { .. } => Rows::Liked(liked::liked_of(result)?),
        Statement::HotAuthors { .. } => {
            Rows::HotAuthors(result.results::<HotAuthor>()?.into_iter().map(|a| (a.id, a.n)).collect())
        }
    })
}

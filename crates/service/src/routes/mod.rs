//! The route table: each resource's module gives its rows (a route's
//! description and its handler), assembled here in the order the
//! description lists them. The router and `GET /v1/openapi.json` are both
//! made from it, so a route cannot be served undescribed, nor described
//! and not served.

use axum::http::{Method, StatusCode, Uri};

use crate::error::ApiError;
use crate::openapi::RouteDoc;

mod answer;
mod blocks;
mod doc;
mod games;
mod health;
pub(crate) mod log;
mod operator;
mod plays;
mod receipts;
mod redemptions;
mod sales;
mod units;

pub(crate) use doc::Row;

/// Where the description is served.
pub(crate) const OPENAPI_PATH: &str = "/v1/openapi.json";

/// Every route: its description and its handler.
pub(crate) fn table() -> Vec<Row> {
    let openapi = (
        RouteDoc {
            answers: &[(200, "openapi", "this description")],
            ..doc::doc("GET", OPENAPI_PATH, "This description (OpenAPI 3.1)", None)
        },
        // Served beside the table: it is made from it.
        None,
    );
    [
        redemptions::rows(),
        units::rows(),
        sales::rows(),
        receipts::rows(),
        plays::rows(),
        blocks::rows(),
        games::rows(),
        log::rows(),
        health::rows(),
        vec![openapi],
        operator::rows(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A path the service has no route for: a JSON refusal like every other
/// answer.
pub(crate) async fn no_route(uri: Uri) -> ApiError {
    ApiError::Refusal {
        status: StatusCode::NOT_FOUND,
        code: "no_route",
        message: format!("no route {} (docs/API.md lists the routes)", uri.path()),
    }
}

/// A route asked with a method it does not take.
pub(crate) async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::Refusal {
        status: StatusCode::METHOD_NOT_ALLOWED,
        code: "method_not_allowed",
        message: format!("{} does not take {method} (docs/API.md)", uri.path()),
    }
}

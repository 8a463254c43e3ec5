//! What a handler takes from its request, each refused as our error
//! object ([`ApiError`]), never axum's plain text: a JSON body of the
//! route's shape, the `Idempotency-Key` header, `?receipt=`, and who asks.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use ticket_issuer_core::error::Error;
use ticket_issuer_ledger::redeemer::Asker;

use crate::error::ApiError;
use crate::tokens::Roles;

/// A request body's expected shape, for the refusal of another.
pub(crate) trait Shape {
    /// The shape, as the refusal names it.
    const SHAPE: &'static str;
}

/// A JSON body of the route's shape; any other is refused as our error
/// object (`400 invalid_request`), never axum's plain text.
pub(crate) struct JsonBody<T>(pub(crate) T);

impl<T, S> FromRequest<S> for JsonBody<T>
where
    T: DeserializeOwned + Shape,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody<T>, ApiError> {
        let bytes = Bytes::from_request(request, state).await.map_err(|e| {
            ApiError::bad_request(
                "invalid_request",
                format!("the body could not be read: {}", e.body_text()),
            )
        })?;
        serde_json::from_slice(&bytes).map(JsonBody).map_err(|e| {
            ApiError::bad_request(
                "invalid_request",
                format!("the body is not {}: {e}", T::SHAPE),
            )
        })
    }
}

/// The `Idempotency-Key` header, if any (docs/API.md §Idempotency); one
/// that is not visible ASCII is refused (`bad_idempotency_key`).
pub(crate) struct IdempotencyKey(pub(crate) Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<IdempotencyKey, ApiError> {
        Ok(IdempotencyKey(idempotency_key(&parts.headers)?))
    }
}

/// The `Idempotency-Key` header, if any.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, Error> {
    headers
        .get("idempotency-key")
        .map(|v| {
            v.to_str()
                .map(str::to_string)
                .map_err(|_| Error::BadIdempotencyKey {
                    key: String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    reason: "it is not visible ASCII".into(),
                })
        })
        .transpose()
}

/// `?receipt=true` of a sale or a redemption: the answer carries the
/// entry's receipt (docs/REDEMPTION.md §Receipts); without it, nothing
/// more is read. Other parameters are left alone, as before.
#[derive(Deserialize)]
struct ReceiptQuery {
    #[serde(default)]
    receipt: bool,
}

/// `?receipt=` of a sale or a redemption (false when absent); a value
/// other than `true` or `false` is refused as our error object (`400
/// invalid_request`).
pub(crate) struct ReceiptAsked(pub(crate) bool);

impl<S: Send + Sync> FromRequestParts<S> for ReceiptAsked {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<ReceiptAsked, ApiError> {
        <Query<ReceiptQuery> as FromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(|Query(q)| ReceiptAsked(q.receipt))
            .map_err(|_| {
                ApiError::bad_request(
                    "invalid_request",
                    "the query is not ?receipt=true or ?receipt=false".into(),
                )
            })
    }
}

/// The name and roles of the token a request came with (its lane; an
/// operator's action's `by`), put in the request by the token middleware.
#[derive(Clone)]
pub(crate) struct Caller(pub(crate) String, pub(crate) Roles);

impl Caller {
    /// Who the request is answered for: a token with the operator role
    /// sees every unit, any other its own lane's.
    fn asker(&self) -> Asker {
        if self.1.operator {
            Asker::OperatorToken(self.0.clone())
        } else {
            Asker::Platform(self.0.clone())
        }
    }
}

/// Who the request is answered for ([`Caller::asker`]). A route open
/// without a token (`--public-log`, `--public-health`) takes none; any
/// other has its caller, checked by the token middleware.
pub(crate) struct Asking(pub(crate) Asker);

impl<S: Send + Sync> FromRequestParts<S> for Asking {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Asking, ApiError> {
        parts
            .extensions
            .get::<Caller>()
            .map(|c| Asking(c.asker()))
            .ok_or(ApiError::Unauthorized)
    }
}

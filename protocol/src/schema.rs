//! Schema pieces that the answer types written by hand describe
//! themselves with (the history's points are tuples, which utoipa's derive
//! would describe as arrays of objects): below both the types (`api`) and
//! the document that gathers them (`openapi`). Only with the `openapi`
//! feature.

use utoipa::openapi::{
    schema::{ArrayBuilder, ArrayItems, ObjectBuilder, SchemaType, Type},
    RefOr, Schema,
};

/// A fixed-length array whose items are `items`, in order, and nothing
/// more (how the history's points are written).
pub(crate) fn tuple(description: &str, items: impl IntoIterator<Item = Schema>) -> RefOr<Schema> {
    let items: Vec<Schema> = items.into_iter().collect();
    let n = items.len();
    ArrayBuilder::new()
        .description(Some(description))
        .prefix_items(items)
        .items(ArrayItems::False)
        .min_items(Some(n))
        .max_items(Some(n))
        .into()
}

/// A time in Unix milliseconds.
pub(crate) fn millis(description: &str) -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .description(Some(description))
        .into()
}

/// A number of zero or more (`null` too if `nullable`).
pub(crate) fn number(description: &str, nullable: bool) -> Schema {
    let kind = if nullable {
        SchemaType::from_iter([Type::Number, Type::Null])
    } else {
        SchemaType::new(Type::Number)
    };
    ObjectBuilder::new()
        .schema_type(kind)
        .minimum(Some(0))
        .description(Some(description))
        .into()
}

/// A share of an interval, 0 to 1.
pub(crate) fn share(description: &str) -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::Number)
        .minimum(Some(0))
        .maximum(Some(1))
        .description(Some(description))
        .into()
}

/// A share of an interval, 0 to 1, or `null` where it is unknown.
pub(crate) fn nullable_share(description: &str) -> Schema {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Number, Type::Null]))
        .minimum(Some(0))
        .maximum(Some(1))
        .description(Some(description))
        .into()
}

//! The new webhook's form as a reducer: what the admin typed, the error
//! shown beside a field (or above the form), the secret of the webhook
//! just made (shown once) and whether a request is out. It changes only
//! through [`DraftAction`], so every step is tested without a browser.

use std::rc::Rc;

use protocol::{
    api::ApiError,
    watch::{Event, Format},
};
use yew::Reducible;

use super::form::{FormInput, Servers};
use crate::i18n::{tf, K};

/// The form's fields that show an error of their own (the request's
/// names); an error naming any other is shown above the form.
pub const FIELDS: [&str; 5] = ["url", "events", "servers", "threshold", "cooldown"];

/// An error the form shows: beside `field` (the request's name), or above
/// the form when it names none the form has.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftError {
    pub field: String,
    pub message: String,
}

impl DraftError {
    /// The form's words for `e`, the page's own check's or the bridge's
    /// 400: the field's message beside it, or "the bridge says …" above.
    pub fn of(e: &ApiError) -> Self {
        let field = e.field.clone().unwrap_or_else(|| "body".into());
        let message = if FIELDS.contains(&field.as_str()) {
            e.error.clone()
        } else {
            tf(K::BridgeSays, &[&e.error])
        };
        Self { field, message }
    }

    /// Whether it is shown above the form (it names no field the form has).
    pub fn is_general(&self) -> bool {
        !FIELDS.contains(&self.field.as_str())
    }
}

/// A text field of the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Url,
    Keys,
    NameContains,
    Threshold,
    Cooldown,
}

/// The new webhook's form and what became of its last request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Draft {
    pub input: FormInput,
    /// The error shown, until the form is sent again.
    pub error: Option<DraftError>,
    /// The webhook just made (its id and secret), shown once, until the
    /// admin says it is kept.
    pub secret: Option<(String, String)>,
    /// A request is out: the form cannot be sent again.
    pub busy: bool,
}

/// Everything that changes a [`Draft`].
#[derive(Debug, Clone, PartialEq)]
pub enum DraftAction {
    /// A text field's new value.
    Edit(Field, String),
    Format(Format),
    Servers(Servers),
    /// Ticks or unticks an event.
    Toggle(Event),
    /// The form was refused, by the page's own check or by the bridge:
    /// the request (if one was out) has ended.
    Refused(DraftError),
    /// The form passed the page's check and its request is out.
    Sending,
    /// The bridge made the webhook: its id and its secret. The form
    /// starts over.
    Created {
        id: String,
        secret: String,
    },
    /// The admin has kept the secret: it is shown no more.
    SecretKept,
}

impl Reducible for Draft {
    type Action = DraftAction;

    fn reduce(self: Rc<Self>, action: DraftAction) -> Rc<Self> {
        let mut d = (*self).clone();
        match action {
            DraftAction::Edit(field, value) => {
                let i = &mut d.input;
                match field {
                    Field::Url => i.url = value,
                    Field::Keys => i.keys = value,
                    Field::NameContains => i.name_contains = value,
                    Field::Threshold => i.threshold = value,
                    Field::Cooldown => i.cooldown = value,
                }
            }
            DraftAction::Format(format) => d.input.format = format,
            DraftAction::Servers(servers) => d.input.servers = servers,
            DraftAction::Toggle(event) => d.input.toggle(event),
            DraftAction::Refused(shown) => {
                d.error = Some(shown);
                d.busy = false;
            }
            DraftAction::Sending => {
                d.error = None;
                d.busy = true;
            }
            DraftAction::Created { id, secret } => {
                d.input = FormInput::default();
                d.error = None;
                d.secret = Some((id, secret));
                d.busy = false;
            }
            DraftAction::SecretKept => d.secret = None,
        }
        Rc::new(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(d: Rc<Draft>, a: DraftAction) -> Rc<Draft> {
        d.reduce(a)
    }

    #[test]
    fn edits_change_only_their_field() {
        let d = Rc::new(Draft::default());
        let d = step(
            d,
            DraftAction::Edit(Field::Url, "https://x.example/h".into()),
        );
        let d = step(d, DraftAction::Edit(Field::Threshold, "5".into()));
        let d = step(d, DraftAction::Format(Format::Discord));
        let d = step(d, DraftAction::Servers(Servers::Keys));
        let d = step(d, DraftAction::Edit(Field::Keys, "k1 k2".into()));
        let d = step(d, DraftAction::Toggle(Event::ServerOnline));
        let mut want = FormInput {
            url: "https://x.example/h".into(),
            threshold: "5".into(),
            format: Format::Discord,
            servers: Servers::Keys,
            keys: "k1 k2".into(),
            ..FormInput::default()
        };
        want.toggle(Event::ServerOnline);
        assert_eq!(d.input, want);
        assert_eq!(
            (d.error.clone(), d.secret.clone(), d.busy),
            (None, None, false)
        );
    }

    #[test]
    fn a_refusal_ends_the_request_and_keeps_the_input() {
        let d = Rc::new(Draft::default());
        let d = step(d, DraftAction::Edit(Field::Url, "ftp://nope".into()));
        let d = step(d, DraftAction::Sending);
        assert!(d.busy);
        let refusal = DraftError {
            field: "url".into(),
            message: "must be https".into(),
        };
        let d = step(d, DraftAction::Refused(refusal.clone()));
        assert!(!d.busy);
        assert_eq!(d.error, Some(refusal));
        assert_eq!(d.input.url, "ftp://nope");
        // Sent again: the old error goes while the request is out.
        let d = step(d, DraftAction::Sending);
        assert_eq!((d.error.clone(), d.busy), (None, true));
    }

    #[test]
    fn a_made_webhook_shows_its_secret_once_and_clears_the_form() {
        let d = Rc::new(Draft::default());
        let d = step(
            d,
            DraftAction::Edit(Field::Url, "https://x.example/h".into()),
        );
        let d = step(d, DraftAction::Sending);
        let d = step(
            d,
            DraftAction::Created {
                id: "wh1".into(),
                secret: "whsec_abc".into(),
            },
        );
        assert_eq!(d.input, FormInput::default());
        assert_eq!(d.secret, Some(("wh1".into(), "whsec_abc".into())));
        assert!(!d.busy);
        let d = step(d, DraftAction::SecretKept);
        assert_eq!(d.secret, None);
    }

    #[test]
    fn an_error_naming_no_field_of_the_form_is_shown_above_it() {
        let beside = DraftError::of(&ApiError {
            error: "too long".into(),
            field: Some("url".into()),
        });
        assert!(!beside.is_general());
        assert_eq!(beside.message, "too long");
        let above = DraftError::of(&ApiError {
            error: "bad JSON".into(),
            field: None,
        });
        assert!(above.is_general());
        assert_eq!(above.field, "body");
        assert!(above.message.contains("bad JSON"), "{}", above.message);
    }
}

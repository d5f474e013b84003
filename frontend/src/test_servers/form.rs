//! The add form's validation: each field on its own through the protocol
//! crate's parsers, so every input gets the protocol's own message, and a
//! valid form yields the protocol's [`Registration`] (checked once, here).

use protocol::{Registration, ServerAddress, ServerName, ServerPort, ValidationError};

/// The add form's raw inputs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FormInput {
    pub name: String,
    pub address: String,
    pub port: String,
}

/// Per-field errors, each the protocol crate's own message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FormErrors {
    pub name: Option<ValidationError>,
    pub address: Option<ValidationError>,
    pub port: Option<ValidationError>,
}

impl FormErrors {
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.address.is_none() && self.port.is_none()
    }

    /// The error for a wire field name (`ValidationError::field()`).
    pub fn for_field(&self, field: &str) -> Option<&ValidationError> {
        [&self.name, &self.address, &self.port]
            .into_iter()
            .flatten()
            .find(|e| e.field() == Some(field))
    }
}

/// Validates each field on its own so every input gets its message, and
/// returns the registration when all three pass. A port that is not a
/// number is out of range as far as the rule is concerned.
pub fn validate_form(input: &FormInput) -> (FormErrors, Option<Registration>) {
    let name = ServerName::parse(&input.name);
    let address = ServerAddress::parse(input.address.trim());
    let port = input
        .port
        .trim()
        .parse::<u64>()
        .map_err(|_| ValidationError::PortOutOfRange)
        .and_then(ServerPort::new);
    let errors = FormErrors {
        name: name.as_ref().err().cloned(),
        address: address.as_ref().err().cloned(),
        port: port.as_ref().err().cloned(),
    };
    match (name, address, port) {
        (Ok(name), Ok(address), Ok(port)) => (
            errors,
            Some(Registration {
                name,
                address,
                port,
            }),
        ),
        _ => (errors, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, address: &str, port: &str) -> FormInput {
        FormInput {
            name: name.into(),
            address: address.into(),
            port: port.into(),
        }
    }

    #[test]
    fn form_uses_the_protocol_messages() {
        let (errors, ok) = validate_form(&input("Feuerland", "192.168.0.10", "20000"));
        assert!(errors.is_empty());
        assert_eq!(
            ok,
            Registration::new("Feuerland", "192.168.0.10", 20000).ok()
        );

        let (errors, ok) = validate_form(&input("", "1.2.3", "51963"));
        assert!(ok.is_none());
        assert_eq!(errors.name, Some(ValidationError::NameEmpty));
        assert!(matches!(
            errors.address,
            Some(ValidationError::InvalidIpv4(_))
        ));
        assert_eq!(errors.port, Some(ValidationError::PortReserved));
        assert_eq!(
            errors
                .for_field("serverPort")
                .map(ToString::to_string)
                .as_deref(),
            Some("port 51963 is reserved for the master server")
        );
        for bad_port in ["", "abc", "0", "65536", "-1", "99999999999999999999999"] {
            let (errors, _) = validate_form(&input("x", "a.org", bad_port));
            assert_eq!(
                errors.port,
                Some(ValidationError::PortOutOfRange),
                "{bad_port}"
            );
        }
        let (errors, ok) = validate_form(&input("轰炸机人", " fd40:9dc7:b528::1 ", " 30000 "));
        assert!(errors.is_empty());
        assert_eq!(
            ok,
            Registration::new("轰炸机人", "fd40:9dc7:b528::1", 30000).ok()
        );
    }
}

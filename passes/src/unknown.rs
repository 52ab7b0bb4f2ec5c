//! The unknown: what a faulty part of a draft becomes, so that one fault is one diagnostic.
//!
//! A part that does not resolve — a port that does not exist, a branch label the router
//! does not declare, a contracts envelope that cannot be read, an edge's kind that is not
//! a kind — is reported once, where it is resolved, and then does not vanish: it becomes
//! [`Resolved::Unknown`], like ty's `Unknown` or rustc's error type. Every later check
//! asks one of two questions of it, and an unknown answers both the same way:
//!
//! - *could it be what is needed?* ([`Resolved::could_be`]): yes. An edge into an unknown
//!   port could feed any input of its node; an unknown label could take any branch of its
//!   router; an unreadable envelope could declare any port, type or artifact.
//! - *is it known to be at fault?* ([`Resolved::known_to_be`]): no. Nothing is blamed on
//!   what is already reported.
//!
//! An unknown stays within what is known around it (its node, its router, its edge's
//! source), so two faults in parts of a draft that share no node never touch each other's
//! reports (`conformance/tests/metamorphic.rs`). docs/decisions.md, "One fault, one
//! diagnostic", lists what each check makes of it.

/// A part as resolution left it: the thing itself, or unknown (its fault is reported).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resolved<T> {
    Known(T),
    Unknown,
}

impl<T> Resolved<T> {
    /// Whether it could satisfy `need`: an unknown could be anything.
    pub fn could_be(&self, need: impl FnOnce(&T) -> bool) -> bool {
        match self {
            Resolved::Known(value) => need(value),
            Resolved::Unknown => true,
        }
    }

    /// Whether it is known to be at fault as `fault` says: an unknown never is.
    pub fn known_to_be(&self, fault: impl FnOnce(&T) -> bool) -> bool {
        match self {
            Resolved::Known(value) => fault(value),
            Resolved::Unknown => false,
        }
    }

    /// The thing, when it is known.
    pub fn known(&self) -> Option<&T> {
        match self {
            Resolved::Known(value) => Some(value),
            Resolved::Unknown => None,
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Resolved::Unknown)
    }

    pub fn as_ref(&self) -> Resolved<&T> {
        match self {
            Resolved::Known(value) => Resolved::Known(value),
            Resolved::Unknown => Resolved::Unknown,
        }
    }
}

impl<T> From<Option<T>> for Resolved<T> {
    /// `None`: what could not be resolved.
    fn from(value: Option<T>) -> Self {
        value.map_or(Resolved::Unknown, Resolved::Known)
    }
}

#[cfg(test)]
mod tests {
    use super::Resolved;

    #[test]
    fn an_unknown_satisfies_every_need_and_is_blamed_for_nothing() {
        let unknown: Resolved<&str> = Resolved::Unknown;
        assert!(unknown.could_be(|p| *p == "data") && unknown.could_be(|_| false));
        assert!(!unknown.known_to_be(|_| true));
        let known = Resolved::Known("data");
        assert!(known.could_be(|p| *p == "data") && !known.could_be(|p| *p == "query"));
        assert!(known.known_to_be(|p| *p == "data") && !known.known_to_be(|p| *p == "query"));
    }
}

//! Rehearsal stand-in for `anyhow`: an `Error` that any error converts into,
//! with context lines, `Result`, the `Context` trait and the `anyhow!`,
//! `bail!` and `ensure!` macros.

use std::fmt;

/// Any error, with the context it was given on its way up.
pub struct Error {
    inner: Box<dyn std::error::Error + Send + Sync + 'static>,
    context: Vec<String>,
}

/// `Result<T, anyhow::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug)]
struct Message(String);

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Message {}

impl Error {
    /// An error of a message.
    pub fn msg<M: fmt::Display>(message: M) -> Self {
        Error { inner: Box::new(Message(message.to_string())), context: Vec::new() }
    }

    /// The error with one more line of context, outermost first.
    pub fn context<C: fmt::Display>(mut self, context: C) -> Self {
        self.context.push(context.to_string());
        self
    }

    /// The innermost error.
    pub fn root_cause(&self) -> &(dyn std::error::Error + 'static) {
        let mut cause: &(dyn std::error::Error + 'static) = &*self.inner;
        while let Some(next) = cause.source() {
            cause = next;
        }
        cause
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for Error {
    fn from(error: E) -> Self {
        Error { inner: Box::new(error), context: Vec::new() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.context.last() {
            Some(outer) => f.write_str(outer),
            None => write!(f, "{}", self.inner),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lines: Vec<String> = self.context.iter().rev().cloned().collect();
        lines.push(self.inner.to_string());
        write!(f, "{}", lines[0])?;
        if lines.len() > 1 {
            f.write_str("\n\nCaused by:")?;
            for line in &lines[1..] {
                write!(f, "\n    {}", line)?;
            }
        }
        Ok(())
    }
}

/// Context for the error of a `Result` or the `None` of an `Option`.
pub trait Context<T> {
    fn context<C: fmt::Display + Send + Sync + 'static>(self, context: C) -> Result<T>;
    fn with_context<C: fmt::Display + Send + Sync + 'static, F: FnOnce() -> C>(
        self,
        f: F,
    ) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context<C: fmt::Display + Send + Sync + 'static>(self, context: C) -> Result<T> {
        self.map_err(|e| e.into().context(context))
    }
    fn with_context<C: fmt::Display + Send + Sync + 'static, F: FnOnce() -> C>(
        self,
        f: F,
    ) -> Result<T> {
        self.map_err(|e| e.into().context(f()))
    }
}

impl<T> Context<T> for Option<T> {
    fn context<C: fmt::Display + Send + Sync + 'static>(self, context: C) -> Result<T> {
        self.ok_or_else(|| Error::msg(context))
    }
    fn with_context<C: fmt::Display + Send + Sync + 'static, F: FnOnce() -> C>(
        self,
        f: F,
    ) -> Result<T> {
        self.ok_or_else(|| Error::msg(f()))
    }
}

/// An `Error` of a format string, or of a message.
#[macro_export]
macro_rules! anyhow {
    ($fmt:literal $(, $arg:expr)* $(,)?) => { $crate::Error::msg(format!($fmt $(, $arg)*)) };
    ($msg:expr $(,)?) => { $crate::Error::msg($msg) };
}

/// Return early with an `anyhow!` error.
#[macro_export]
macro_rules! bail {
    ($($t:tt)*) => { return Err($crate::anyhow!($($t)*).into()) };
}

/// `bail!` unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($t:tt)*) => { if !$cond { $crate::bail!($($t)*); } };
}

#[cfg(test)]
mod tests {
    use super::{Context, Result};

    fn parse(s: &str) -> Result<u32> {
        let n: u32 = s.parse().context("not a number")?;
        crate::ensure!(n > 0, "{} is not positive", n);
        Ok(n)
    }

    #[test]
    fn context_and_macros() {
        assert_eq!(parse("7").unwrap(), 7);
        assert_eq!(parse("x").unwrap_err().to_string(), "not a number");
        assert_eq!(parse("0").unwrap_err().to_string(), "0 is not positive");
    }
}

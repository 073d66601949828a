//! Config layering: a RON file whose top level is a struct may start with
//! `base: "other.ron"` (a path relative to the file) and then give only
//! what differs from that file.
//!
//! The merge is on the text, before any typed parsing: a field of the
//! layer replaces the base's field of the same name, except that two
//! anonymous structs `( name: value, … )` merge field by field, to any
//! depth. Everything else (numbers, strings, lists, `Some(…)`, enum
//! variants, named structs) is replaced whole. Bases may themselves have a
//! base. A file without `base:` is read as it is, so its parse errors keep
//! their positions; for a layered file they name both files.
//!
//! ```ron
//! // configs/hood_tshirt.ron: the T-shirt run without self-collision.
//! (
//!     base: "tshirt.ron",
//!     self_collision: (weight: 30000.0),
//!     model: (architecture: "f,c0|f,c0|d:c0|u:f,c0|f,c0|f"),
//!     train: (self_collision_from: None, seed: 3),
//! )
//! ```

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Deepest chain of bases followed (a longer one is almost surely a loop).
const MAX_DEPTH: usize = 8;

/// The RON text of `path` with its bases merged in (module docs), and the
/// files it came from, the layer last.
pub fn read_layered(path: &Path) -> Result<(String, Vec<PathBuf>)> {
    let mut files = Vec::new();
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let Some(top) = parse_top(&text) else {
        return Ok((text, vec![path.to_path_buf()]));
    };
    if top.get("base").is_none() {
        return Ok((text, vec![path.to_path_buf()]));
    }
    let merged = resolve(path, top, &mut files)?;
    files.reverse();
    Ok((merged.emit(), files))
}

/// `layer` with its base chain merged in; `chain` holds the files being
/// resolved, the layer first.
fn resolve(path: &Path, mut layer: Node, chain: &mut Vec<PathBuf>) -> Result<Node> {
    if chain.len() >= MAX_DEPTH || chain.iter().any(|f| f == path) {
        return Err(config_error(
            path,
            format!("the chain of `base:` files loops or is deeper than {MAX_DEPTH}"),
        ));
    }
    chain.push(path.to_path_buf());
    let Some(base) = layer.take("base") else {
        return Ok(layer);
    };
    let name = match &base {
        Node::Raw(text) => parse_string(text),
        Node::Map(_) => None,
    }
    .ok_or_else(|| config_error(path, "`base` must be a file name in quotes"))?;
    let base_path = path.parent().unwrap_or(Path::new("")).join(name);
    let text = std::fs::read_to_string(&base_path).map_err(|e| Error::io(&base_path, e))?;
    let base_top = parse_top(&text).ok_or_else(|| {
        config_error(
            &base_path,
            format!(
                "not a struct `( name: value, … )`, so {} cannot be layered on it",
                path.display()
            ),
        )
    })?;
    let mut merged = resolve(&base_path, base_top, chain)?;
    merged.merge(layer);
    Ok(merged)
}

fn config_error(path: &Path, what: impl Into<String>) -> Error {
    Error::Config {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

/// A value as the merge sees it.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// An anonymous struct's fields, in order.
    Map(Vec<(String, Node)>),
    /// Any other value, as text with the comments removed.
    Raw(String),
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            Node::Raw(_) => None,
        }
    }

    fn take(&mut self, key: &str) -> Option<Node> {
        match self {
            Node::Map(fields) => {
                let i = fields.iter().position(|(k, _)| k == key)?;
                Some(fields.remove(i).1)
            }
            Node::Raw(_) => None,
        }
    }

    /// Lays `layer` over `self`: maps merge field by field, anything else
    /// is replaced.
    fn merge(&mut self, layer: Node) {
        match (self, layer) {
            (Node::Map(base), Node::Map(fields)) => {
                for (key, value) in fields {
                    match base.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, old)) => old.merge(value),
                        None => base.push((key, value)),
                    }
                }
            }
            (this, layer) => *this = layer,
        }
    }

    /// RON text of the value.
    fn emit(&self) -> String {
        match self {
            Node::Raw(text) => text.clone(),
            Node::Map(fields) => {
                let inner: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", v.emit()))
                    .collect();
                format!("({})", inner.join(", "))
            }
        }
    }
}

/// The top-level value of `text` if it is an anonymous struct.
fn parse_top(text: &str) -> Option<Node> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.skip_blank();
    // RON attributes (`#![enable(...)]`) are not layered.
    if p.peek() != Some(b'(') {
        return None;
    }
    let node = p.value()?;
    p.skip_blank();
    (p.i == p.s.len() && matches!(node, Node::Map(_))).then_some(node)
}

/// The contents of a plain double-quoted string without escapes.
fn parse_string(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains(['"', '\\'])).then_some(inner)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Skips whitespace and comments (`// …` and nested `/* … */`).
    fn skip_blank(&mut self) {
        loop {
            match (self.peek(), self.s.get(self.i + 1)) {
                (Some(c), _) if c.is_ascii_whitespace() => self.i += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let mut depth = 0;
                    while self.i < self.s.len() {
                        if self.s[self.i..].starts_with(b"/*") {
                            depth += 1;
                            self.i += 2;
                        } else if self.s[self.i..].starts_with(b"*/") {
                            depth -= 1;
                            self.i += 2;
                            if depth == 0 {
                                break;
                            }
                        } else {
                            self.i += 1;
                        }
                    }
                }
                _ => return,
            }
        }
    }

    /// An identifier at the cursor, without moving it.
    fn ident_at(&self, at: usize) -> Option<(String, usize)> {
        let start = at;
        let mut end = at;
        while self
            .s
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            end += 1;
        }
        let first = *self.s.get(start)?;
        (end > start && !first.is_ascii_digit()).then(|| {
            (
                String::from_utf8_lossy(&self.s[start..end]).into_owned(),
                end,
            )
        })
    }

    /// Whether the `(` at the cursor opens an anonymous struct: its first
    /// item is `name:` (not `name::`).
    fn opens_map(&mut self) -> bool {
        let saved = self.i;
        self.i += 1;
        self.skip_blank();
        let map = match self.ident_at(self.i) {
            Some((_, end)) => {
                self.i = end;
                self.skip_blank();
                self.peek() == Some(b':') && self.s.get(self.i + 1) != Some(&b':')
            }
            None => false,
        };
        self.i = saved;
        map
    }

    /// The value at the cursor, up to (not including) the `,` or closing
    /// bracket that ends it.
    fn value(&mut self) -> Option<Node> {
        self.skip_blank();
        if self.peek() == Some(b'(') && self.opens_map() {
            return self.map();
        }
        let mut text = String::new();
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                b'/' if matches!(self.s.get(self.i + 1), Some(b'/' | b'*')) => {
                    self.skip_blank();
                    text.push(' ');
                    continue;
                }
                b'"' => {
                    let start = self.i;
                    self.i += 1;
                    while let Some(c) = self.peek() {
                        self.i += 1;
                        match c {
                            b'\\' => self.i += 1,
                            b'"' => break,
                            _ => {}
                        }
                    }
                    text.push_str(&String::from_utf8_lossy(self.s.get(start..self.i)?));
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => break,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => break,
                _ => {}
            }
            // Whole UTF-8 characters: copy up to the next ASCII byte.
            let start = self.i;
            self.i += 1;
            while self.peek().is_some_and(|c| c >= 0x80) {
                self.i += 1;
            }
            text.push_str(&String::from_utf8_lossy(&self.s[start..self.i]));
        }
        let text = text.trim().to_string();
        (!text.is_empty()).then_some(Node::Raw(text))
    }

    /// `( name: value, … )` at the cursor.
    fn map(&mut self) -> Option<Node> {
        self.i += 1;
        let mut fields = Vec::new();
        loop {
            self.skip_blank();
            if self.peek() == Some(b')') {
                self.i += 1;
                return Some(Node::Map(fields));
            }
            let (key, end) = self.ident_at(self.i)?;
            self.i = end;
            self.skip_blank();
            if self.peek() != Some(b':') {
                return None;
            }
            self.i += 1;
            let value = self.value()?;
            if fields.iter().any(|(k, _)| *k == key) {
                return None;
            }
            fields.push((key, value));
            self.skip_blank();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b')') => {}
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(base: &str, layer: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("base.ron"), base).unwrap();
        std::fs::write(dir.path().join("layer.ron"), layer).unwrap();
        read_layered(&dir.path().join("layer.ron")).unwrap().0
    }

    #[test]
    fn structs_merge_field_by_field_and_everything_else_is_replaced() {
        let base = r#"// a base
(
    garment: (name_or_path: "tshirt", resolution: 1000),
    model: (latent: 32, architecture: "f,c0|f", integration: Skinned), // size
    train: (steps: 8000, material: Some((density: 0.2, mu: 1.0)), motions: [(motion: "01_01", frames: "0:")]),
)"#;
        let layer = r#"(
    base: "base.ron",
    /* the HOOD baseline */
    model: (architecture: "f,c0|f,c0", settle: true),
    train: (material: None, motions: [(motion: "01_03", frames: "0:789")]),
)"#;
        assert_eq!(
            merged(base, layer),
            r#"(garment: (name_or_path: "tshirt", resolution: 1000), model: (latent: 32, architecture: "f,c0|f,c0", integration: Skinned, settle: true), train: (steps: 8000, material: None, motions: [(motion: "01_03", frames: "0:789")]))"#
        );
    }

    #[test]
    fn a_file_without_a_base_is_read_as_it_is() {
        let text = "// comment\n(a: 1, // x\n b: \"s, with ) inside\")\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.ron");
        std::fs::write(&path, text).unwrap();
        assert_eq!(read_layered(&path).unwrap().0, text);
    }

    #[test]
    fn comments_strings_and_nesting_survive_the_merge() {
        let out = merged(
            "(a: [1, 2, /* c, ) */ 3], b: \"x // not a comment, )\", c: Some((d: 1)))",
            "(base: \"base.ron\", e: 2.5e-3 // trailing\n)",
        );
        assert_eq!(
            out,
            "(a: [1, 2,  3], b: \"x // not a comment, )\", c: Some((d: 1)), e: 2.5e-3)"
        );
    }

    #[test]
    fn bases_chain_and_loops_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("a.ron", "(x: 1, y: (p: 1, q: 2))");
        write("b.ron", "(base: \"a.ron\", y: (q: 3))");
        write("c.ron", "(base: \"b.ron\", x: 4)");
        let (text, files) = read_layered(&dir.path().join("c.ron")).unwrap();
        assert_eq!(text, "(x: 4, y: (p: 1, q: 3))");
        assert_eq!(files.len(), 3);

        write("loop1.ron", "(base: \"loop2.ron\", x: 1)");
        write("loop2.ron", "(base: \"loop1.ron\", x: 2)");
        let err = read_layered(&dir.path().join("loop1.ron")).unwrap_err();
        assert!(err.to_string().contains("loops"), "{err}");

        write("missing.ron", "(base: \"nowhere.ron\")");
        let err = read_layered(&dir.path().join("missing.ron")).unwrap_err();
        assert!(err.to_string().contains("nowhere.ron"), "{err}");

        write("bad_base.ron", "(base: 3)");
        let err = read_layered(&dir.path().join("bad_base.ron")).unwrap_err();
        assert!(err.to_string().contains("file name"), "{err}");

        write("list.ron", "[1, 2]");
        write("on_list.ron", "(base: \"list.ron\")");
        let err = read_layered(&dir.path().join("on_list.ron")).unwrap_err();
        assert!(err.to_string().contains("list.ron"), "{err}");
    }
}

//! The ACL file (`aclfile`) and `user` lines of the configuration: one
//! `user <name> <rules...>` a line, read at start and by `ACL LOAD`,
//! written by `ACL SAVE`.

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;

use super::user::{merge_selector_args, Rules};
use super::Acl;
use crate::error::acl as e;

/// Users parsed from `user` lines, by name, each with the rules its line
/// gives it applied to a new user.
pub(crate) type UserSet = BTreeMap<String, Rules>;

/// Parses one `user` directive's words (name first, rules after) into
/// `users`.
///
/// # Errors
///
/// Redis's explanation: a bad name, a duplicate user, or a bad rule.
pub(crate) fn add_user_line(
    users: &mut UserSet,
    words: &[Bytes],
    all_channels: bool,
) -> Result<(), String> {
    let Some((name, ops)) = words.split_first() else {
        return Err(e::USER_LINE_SHAPE.to_owned());
    };
    let name = super::valid_name(name)
        .ok_or_else(|| e::BAD_USERNAME.trim_start_matches("ERR ").to_owned())?;
    if users.contains_key(&name) {
        return Err(e::duplicate_user(&name));
    }
    let ops = merge_selector_args(ops).map_err(|at| {
        e::unmatched_parenthesis(at)
            .trim_start_matches("ERR ")
            .to_owned()
    })?;
    let rules = Rules::new(all_channels)
        .with(&ops, all_channels)
        .map_err(|(op, err)| e::bad_user_rule(&lossy(op), err.text()))?;
    users.insert(name, rules);
    Ok(())
}

/// Parses an ACL file's text.
///
/// # Errors
///
/// Every bad line, each as `file:line: reason.`, joined as Redis joins
/// them.
pub(crate) fn parse(path: &str, text: &[u8], all_channels: bool) -> Result<UserSet, String> {
    let mut users = UserSet::new();
    let mut errors = Vec::new();
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        let words: Vec<Bytes> = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(Bytes::copy_from_slice)
            .collect();
        let Some((first, rest)) = words.split_first() else {
            continue;
        };
        let result = if first[..] == *b"user" {
            add_user_line(&mut users, rest, all_channels)
        } else {
            Err(e::USER_LINE_SHAPE.to_owned())
        };
        if let Err(err) = result {
            errors.push(format!("{path}:{}: {err}. ", n + 1));
        }
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        Err(errors.concat().trim_end().to_owned())
    }
}

/// Reads and parses the ACL file at `path`.
///
/// # Errors
///
/// The file cannot be read, or [`parse`] refused it.
pub(crate) fn load(path: &str, all_channels: bool) -> Result<UserSet, String> {
    let text = std::fs::read(path).map_err(|err| e::acl_file_unreadable(path, &err))?;
    parse(path, &text, all_channels)
}

/// The ACL file's text for every user of `acl`, as `ACL LIST` lists them.
pub(crate) fn render(acl: &Acl) -> String {
    acl.list().into_iter().map(|line| line + "\n").collect()
}

/// Writes every user of `acl` to `path`, through a temporary file renamed
/// over it, so a crash never leaves half a file.
///
/// # Errors
///
/// The file could not be written.
pub(crate) fn save(acl: &Acl, path: &str) -> std::io::Result<()> {
    let path = Path::new(path);
    let tmp = path.with_extension("acl-tmp");
    std::fs::write(&tmp, render(acl))?;
    std::fs::rename(&tmp, path)
}

fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_users_and_reports_bad_lines() {
        let text =
            b"user alice on allcommands allkeys &* >alice\n\nuser bob on -@all +@set ~set* >bob\n";
        let users = parse("u.acl", text, false).expect("valid");
        assert_eq!(users.len(), 2);
        assert!(users["alice"].password_ok(b"alice"));
        let dup = parse("u.acl", b"user a on\nuser a off\n", false).expect_err("duplicate");
        assert!(dup.contains("u.acl:2: Duplicate user 'a' found"), "{dup}");
        let bad = parse("u.acl", b"nouser a\nuser b +nosuch\n", false).expect_err("bad");
        assert!(bad.starts_with("u.acl:1: "), "{bad}");
        assert!(
            bad.contains("u.acl:2: Error in user declaration '+nosuch'"),
            "{bad}"
        );
    }
}

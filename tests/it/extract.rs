//! Code extraction from model replies: fences of every kind, split and truncated blocks, bare
//! code among prose, the three errors, and garbage that must not panic.

use ldb::generate::reply::code::{
    defines, extract_program, ExtractError, Extracted, ExtractionKind,
};

fn ok(reply: &str, entry: Option<&str>) -> Extracted {
    match extract_program(reply, entry) {
        Ok(found) => found,
        Err(err) => panic!("expected code, got {err:?} for reply:\n{reply}"),
    }
}

fn fenced(tag: Option<&str>) -> ExtractionKind {
    ExtractionKind::Fenced {
        tag: tag.map(str::to_string),
    }
}

const ADD: &str = "def add(a, b):\n    return a + b\n";

#[test]
fn python_fence_with_prose_around() {
    let reply = format!("Here is the fixed code:\n\n```python\n{ADD}```\n\nIt adds the numbers.");
    let found = ok(&reply, Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, fenced(Some("python")));
}

#[test]
fn py_and_python3_tags_are_kept_as_written() {
    let found = ok(&format!("```py\n{ADD}```"), Some("add"));
    assert_eq!(found.how, fenced(Some("py")));
    let found = ok(&format!("```Python3\n{ADD}```"), Some("add"));
    assert_eq!(found.how, fenced(Some("Python3")));
    assert_eq!(found.code, ADD);
}

#[test]
fn fence_without_tag() {
    let found = ok(&format!("```\n{ADD}```\n"), Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, fenced(None));
}

#[test]
fn text_tag_is_accepted_when_the_body_is_python() {
    let found = ok(&format!("```text\n{ADD}```"), Some("add"));
    assert_eq!(found.how, fenced(Some("text")));
}

#[test]
fn tilde_fence() {
    let found = ok(&format!("~~~python\n{ADD}~~~\nDone."), Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, fenced(Some("python")));
}

#[test]
fn longer_fence_holds_shorter_fence_lines() {
    // A four-backtick fence is only closed by four or more backticks.
    let reply = "````python\ndef doc():\n    return '''\n```\n'''\n````\n";
    let found = ok(reply, Some("doc"));
    assert_eq!(found.code, "def doc():\n    return '''\n```\n'''\n");
}

#[test]
fn indented_fence_is_dedented_by_its_indentation() {
    let reply = "1. Replace the function:\n\n   ```python\n   def add(a, b):\n       return a + b\n   ```\n";
    let found = ok(reply, Some("add"));
    assert_eq!(found.code, ADD);
}

#[test]
fn block_indented_as_a_whole_is_dedented() {
    let reply = "```python\n    def add(a, b):\n        return a + b\n```";
    assert_eq!(ok(reply, Some("add")).code, ADD);
}

#[test]
fn second_block_defines_the_entry_point() {
    let reply = format!(
        "First, a quick check:\n```python\nprint(add(1, 2))\n```\nNow the code:\n```python\n{ADD}```"
    );
    let found = ok(&reply, Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, fenced(Some("python")));
}

#[test]
fn entry_point_beats_a_longer_block() {
    let long = "def unrelated(x):\n    y = x * 2\n    z = y + 1\n    w = z - 3\n    return w\n";
    let reply = format!("```python\n{long}```\n```python\n{ADD}```");
    assert_eq!(ok(&reply, Some("add")).code, ADD);
    // Without an entry point the longest block wins.
    assert_eq!(ok(&reply, None).code, long);
}

#[test]
fn program_beats_a_longer_data_block_without_entry_point() {
    let reply = format!(
        "```json\n{{\"input\": [1, 2, 3, 4, 5, 6, 7, 8, 9], \"output\": 45, \"note\": \"sum\"}}\n```\n```python\n{ADD}```"
    );
    assert_eq!(ok(&reply, None).code, ADD);
}

#[test]
fn equal_blocks_prefer_the_later_one() {
    let old = "def add(a, b):\n    return a - b\n";
    let reply = format!("Your code:\n```python\n{old}```\nFixed:\n```python\n{ADD}```");
    assert_eq!(ok(&reply, Some("add")).code, ADD);
}

#[test]
fn helper_and_function_split_over_blocks_are_merged() {
    let reply = "First the helper:\n```python\nimport math\n\ndef is_prime(n):\n    if n < 2:\n        return False\n    return all(n % d for d in range(2, math.isqrt(n) + 1))\n```\nThen the function:\n```python\ndef count_primes(xs):\n    return sum(1 for x in xs if is_prime(x))\n```\nExample:\n```python\nprint(count_primes([2, 3, 4]))\n```";
    let found = ok(reply, Some("count_primes"));
    assert_eq!(found.how, ExtractionKind::Merged);
    assert!(found.code.starts_with("import math\n"));
    assert!(found.code.contains("def is_prime(n):"));
    assert!(found
        .code
        .ends_with("return sum(1 for x in xs if is_prime(x))\n"));
    // The usage example runs code at import time and is left out.
    assert!(!found.code.contains("print("));
}

#[test]
fn imports_in_an_earlier_block_are_merged() {
    let reply = "```python\nfrom collections import Counter\n```\n\n```python\ndef most_common(xs):\n    return Counter(xs).most_common(1)[0][0]\n```";
    let found = ok(reply, Some("most_common"));
    assert_eq!(found.how, ExtractionKind::Merged);
    assert_eq!(
        found.code,
        "from collections import Counter\n\ndef most_common(xs):\n    return Counter(xs).most_common(1)[0][0]\n"
    );
}

#[test]
fn unrelated_helper_block_is_not_merged() {
    let reply = format!("```python\ndef other():\n    return 1\n```\n```python\n{ADD}```");
    let found = ok(&reply, Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, fenced(Some("python")));
}

#[test]
fn function_split_over_blocks_is_merged_when_no_block_defines_it() {
    // The header alone does not parse; the body alone defines nothing.
    let reply = "```python\ndef add(a, b):\n```\n```python\n    return a + b\n```";
    let found = ok(reply, Some("add"));
    assert_eq!(found.how, ExtractionKind::Merged);
    assert_eq!(found.code, ADD);
}

#[test]
fn unclosed_fence_takes_the_rest_of_the_reply() {
    let reply = "Sure:\n```python\ndef add(a, b):\n    return a + b\n\n\n";
    let found = ok(reply, Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, fenced(Some("python")));
}

#[test]
fn truncated_function_in_unclosed_fence_does_not_parse() {
    let reply = "```python\ndef add(a, b):\n    return (a +\n";
    match extract_program(reply, Some("add")) {
        Err(ExtractError::DoesNotParse { code, error }) => {
            assert!(code.starts_with("def add"));
            assert!(error.line >= 2, "{error:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bare_code_whole_reply() {
    let found = ok(ADD, Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, ExtractionKind::Bare);
}

#[test]
fn bare_code_with_prose_before_and_after() {
    let reply = "Here is the fixed code:\ndef add(a, b):\n    return a + b\nThis version returns the sum instead of the difference.\nLet me know if you need more help!";
    let found = ok(reply, Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, ExtractionKind::Bare);
}

#[test]
fn bare_code_after_a_one_word_line() {
    // "Solution" parses as a name but is prose; keeping it would raise NameError at import.
    let reply = format!("Solution\n\n{ADD}");
    assert_eq!(ok(&reply, Some("add")).code, ADD);
}

#[test]
fn bare_code_keeps_the_region_that_defines_the_entry_point() {
    let reply = "Helper usage:\nx = 1\nNow the actual answer, which is longer:\nimport math\n\ndef root(v):\n    return math.sqrt(v)\nThat's all.";
    let found = ok(reply, Some("root"));
    assert_eq!(
        found.code,
        "import math\n\ndef root(v):\n    return math.sqrt(v)\n"
    );
}

#[test]
fn unfenced_program_with_fenced_tests() {
    let reply = format!("{ADD}\nTests:\n```python\nassert add(1, 2) == 3\n```\n");
    let found = ok(&reply, Some("add"));
    assert_eq!(found.code, ADD);
    assert_eq!(found.how, ExtractionKind::Bare);
}

#[test]
fn main_guard_scaffolding_is_kept() {
    let body = format!(
        "{ADD}\n\nif __name__ == \"__main__\":\n    assert add(1, 2) == 3\n    print(\"ok\")\n"
    );
    let found = ok(&format!("```python\n{body}```"), Some("add"));
    assert_eq!(found.code, body);
}

#[test]
fn syntax_error_reports_its_line() {
    let reply = "```python\ndef add(a, b):\n    x = a +\n    return x\n```";
    match extract_program(reply, Some("add")) {
        Err(err @ ExtractError::DoesNotParse { .. }) => {
            let ExtractError::DoesNotParse { code, error } = &err else {
                unreachable!()
            };
            assert_eq!(error.line, 2, "{error:?}");
            assert_eq!(code, "def add(a, b):\n    x = a +\n    return x\n");
            let text = err.to_string();
            assert!(text.contains("line 2"), "{text}");
            assert!(text.contains("not valid Python"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bare_syntax_error_is_reported_not_hidden() {
    let reply = "def add(a, b)\n    return a + b\n";
    match extract_program(reply, Some("add")) {
        Err(ExtractError::DoesNotParse { code, error }) => {
            assert_eq!(error.line, 1);
            assert_eq!(code, "def add(a, b)\n    return a + b\n");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn broken_block_for_the_entry_point_beats_a_parsing_helper() {
    let reply = "```python\nimport math\n```\n```python\ndef add(a, b)\n    return a + b\n```";
    assert!(matches!(
        extract_program(reply, Some("add")),
        Err(ExtractError::DoesNotParse { .. })
    ));
}

#[test]
fn reply_without_code() {
    let reply = "I'm sorry, but I can't see anything wrong with the program. It looks right to me.";
    let err = extract_program(reply, Some("add")).unwrap_err();
    assert_eq!(err, ExtractError::NoCode);
    assert!(err.to_string().contains("```python"));
}

#[test]
fn block_defining_another_function() {
    let reply = "```python\ndef subtract(a, b):\n    return a - b\n```";
    match extract_program(reply, Some("add")) {
        Err(err @ ExtractError::MissingEntryPoint { .. }) => {
            assert!(err.to_string().contains("`add`"), "{err}");
            let ExtractError::MissingEntryPoint { name, code } = err else {
                unreachable!()
            };
            assert_eq!(name, "add");
            assert_eq!(code, "def subtract(a, b):\n    return a - b\n");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn entry_point_as_assignment_or_class_or_async() {
    assert_eq!(
        ok("```python\nadd = lambda a, b: a + b\n```", Some("add")).code,
        "add = lambda a, b: a + b\n"
    );
    assert!(ok(
        "```python\nclass Solution:\n    pass\n```",
        Some("Solution")
    )
    .code
    .starts_with("class"));
    assert!(ok(
        "```python\nasync def fetch():\n    return 1\n```",
        Some("fetch")
    )
    .code
    .starts_with("async"));
}

#[test]
fn crlf_is_normalised() {
    let reply = "Here:\r\n```python\r\ndef add(a, b):\r\n    return a + b\r\n```\r\n";
    let found = ok(reply, Some("add"));
    assert_eq!(found.code, ADD);
}

#[test]
fn tabs_are_kept() {
    let code = "def add(a, b):\n\tif a:\n\t\treturn a + b\n\treturn b\n";
    let found = ok(&format!("```python\n{code}```"), Some("add"));
    assert_eq!(found.code, code);
}

#[test]
fn unicode_identifiers_and_strings() {
    let code = "def grüße(名前):\n    return f\"Hallo, {名前} 👋\"\n";
    let found = ok(&format!("Voilà 🎉\n```python\n{code}```"), Some("grüße"));
    assert_eq!(found.code, code);
}

#[test]
fn trailing_whitespace_lines_are_dropped_and_a_newline_added() {
    let found = ok(
        "```python\n\n\ndef add(a, b):\n    return a + b   \n   \n\t\n```",
        Some("add"),
    );
    assert_eq!(found.code, ADD);
}

#[test]
fn one_megabyte_reply() {
    let filler = "This sentence is filler text that goes on and on. ".repeat(20_000);
    let reply = format!("{filler}\n```python\n{ADD}```\n{filler}");
    assert!(reply.len() > 1_000_000);
    assert_eq!(ok(&reply, Some("add")).code, ADD);

    // A megabyte of bare code still parses as a whole.
    let mut big = String::new();
    let mut i = 0;
    while big.len() < 1_000_000 {
        big.push_str(&format!("def f{i}(x):\n    return x + {i}\n\n"));
        i += 1;
    }
    let found = ok(&big, Some("f0"));
    assert_eq!(found.how, ExtractionKind::Bare);

    // A megabyte of prose with no code.
    let prose = "just words here, nothing else.\n".repeat(35_000);
    assert_eq!(
        extract_program(&prose, Some("add")),
        Err(ExtractError::NoCode)
    );
}

#[test]
fn empty_and_blank_replies() {
    assert_eq!(extract_program("", Some("add")), Err(ExtractError::NoCode));
    assert_eq!(
        extract_program("   \n\n\t", None),
        Err(ExtractError::NoCode)
    );
}

#[test]
fn only_fences() {
    assert_eq!(
        extract_program("```\n```", Some("add")),
        Err(ExtractError::NoCode)
    );
    assert_eq!(
        extract_program("```python\n```\n~~~\n~~~", None),
        Err(ExtractError::NoCode)
    );
    assert_eq!(extract_program("```", None), Err(ExtractError::NoCode));
    assert_eq!(
        extract_program("```python\n# just a comment\n```", None),
        Err(ExtractError::NoCode)
    );
}

#[test]
fn defines_checks_top_level_only() {
    let code = "import os\nx, (y, add) = 1, (2, 3)\nclass K:\n    def inner(self):\n        pass\ndef outer():\n    def nested():\n        pass\nif True:\n    def guarded():\n        pass\n";
    assert!(defines(code, "add"));
    assert!(defines(code, "K"));
    assert!(defines(code, "outer"));
    assert!(!defines(code, "inner"));
    assert!(!defines(code, "nested"));
    assert!(!defines(code, "guarded"));
    assert!(!defines(code, "os"));
    assert!(!defines("def broken(:", "broken"));
    assert!(defines("t: int = 3\n", "t"));
    assert!(!defines("t: int\n", "t"));
}

/// Deterministic xorshift generator, so garbage inputs are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn garbage_never_panics() {
    const PIECES: [&str; 32] = [
        "```",
        "```python\n",
        "~~~",
        "\n",
        "    ",
        "\t",
        "def ",
        "f",
        "(",
        ")",
        ":",
        "return ",
        "'",
        "\"\"\"",
        "\\",
        "\r\n",
        "\r",
        "é",
        "名",
        "👋",
        "\u{0}",
        "{",
        "}",
        "[",
        "if __name__:",
        "async ",
        "class ",
        "=",
        "#",
        "```py",
        "@",
        "lambda",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..600 {
        let mut reply = String::new();
        let pieces = rng.below(60);
        for _ in 0..pieces {
            if rng.below(4) == 0 {
                // A random scalar value anywhere in Unicode.
                let c = char::from_u32((rng.next() % 0x11_0000) as u32).unwrap_or('?');
                reply.push(c);
            } else {
                reply.push_str(PIECES[rng.below(PIECES.len())]);
            }
        }
        let entry = if round % 2 == 0 { Some("f") } else { None };
        match extract_program(&reply, entry) {
            Ok(found) => {
                assert!(found.code.ends_with('\n'), "{reply:?}");
                assert!(!found.code.contains('\r'), "{reply:?}");
            }
            Err(err) => {
                assert!(!err.to_string().is_empty());
            }
        }
        let _ = defines(&reply, "f");
    }
}

#[test]
fn pathological_shapes_never_panic() {
    let deep = "(".repeat(5000);
    let fences = "```\n".repeat(5000);
    let opens = "```python\ndef f(:\n".repeat(2000);
    let indents: String = (0..300)
        .map(|i| format!("{}if x:\n", " ".repeat(i)))
        .collect();
    let lines = "x = (\n".repeat(20_000);
    for reply in [deep, fences, opens, indents, lines] {
        let _ = extract_program(&reply, Some("f"));
        let _ = extract_program(&reply, None);
    }
}

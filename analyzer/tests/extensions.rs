//! The extension libraries through the public API: the documented examples of cel-go's
//! strings, lists, sets, optional-types and two-variable-comprehension libraries (beyond what
//! the cel-spec corpus covers), their error cases, and the checker's refusal of an extension an
//! environment does not enable, naming the extension that would provide it.

use ozcheck_analyzer::check::{Env, SizeHint};
use ozcheck_analyzer::eval::{Activation, EvalError, Limits, Program, Value};
use ozcheck_analyzer::types::Type;
use ozcheck_analyzer::{Diagnostic, Extension, Extensions, Options, compile};

fn env() -> Env {
    Env::general()
        .with_extensions(Extensions::ALL)
        .declare("s", Type::String, SizeHint::default())
}

fn eval(source: &str) -> Result<Value, EvalError> {
    let checked =
        compile(source, &env(), &Options::default()).unwrap_or_else(|d| panic!("{source}: {d:?}"));
    let program = Program::from_checked(&checked).expect("program");
    let mut activation = Activation::new();
    activation.bind("s", Value::string("a,b,,c"));
    program
        .eval(&activation, &Limits::default().with_cost(None))
        .map(|e| e.value)
}

fn holds(source: &str) {
    match eval(source) {
        Ok(Value::Bool(true)) => {}
        other => panic!("{source}: {other:?}"),
    }
}

fn fails(source: &str) {
    assert!(
        matches!(eval(source), Err(EvalError::Runtime { .. })),
        "{source} should be an evaluation error, got {:?}",
        eval(source)
    );
}

#[test]
fn strings_follow_the_documented_examples() {
    holds("'hello'.charAt(4) == 'o' && 'hello'.charAt(5) == ''");
    holds("'hello mellow'.indexOf('ello', 2) == 7 && 'hello mellow'.indexOf('') == 0");
    holds("'hello mellow'.lastIndexOf('') == 12 && 'hello mellow'.lastIndexOf('ello', 6) == 1");
    // A match may start at the offset of lastIndexOf and run past it, never start after it.
    holds("'aé'.lastIndexOf('é', 0) == -1 && 'aé'.lastIndexOf('é', 1) == 1");
    holds("'hello hello'.replace('he', 'we', 1) == 'wello hello'");
    holds("'hello hello'.replace('', '_') == '_h_e_l_l_o_ _h_e_l_l_o_'");
    holds("'hello hello'.replace('h', '') == 'ello ello'");
    holds("'hello hello hello'.split(' ', 2) == ['hello', 'hello hello']");
    holds("s.split(',') == ['a', 'b', '', 'c'] && 'ab'.split('') == ['a', 'b']");
    holds("''.split(',') == [''] && ''.split('') == []");
    holds("'  \\ttrim\\n    '.trim() == 'trim'");
    holds("'gums'.reverse() == 'smug' && ['hello', 'mellow'].join(' ') == 'hello mellow'");
    holds("'%s and %d'.format(['a', 2]) == 'a and 2'");
    holds("'%x %X %o %b'.format([-26, 26u, 8, 5]) == '-1a 1A 10 101'");
    holds("'%.2f|%e|%s'.format([1.005, 1000, 3.0]) == '1.00|1.000000e+03|3'");
    holds("'%s'.format([b'\\xff\\xfeok']) == '\\ufffdok'");
    fails("'hello'.charAt(-1)");
    fails("'hello mellow'.indexOf('ello', -1)");
    fails("'tacocat'.substring(2, 1)");
    fails("'%.101f'.format([1.0])");
    fails("'%s %s'.format(['only one'])");
    fails("'%d'.format(['not a number'])");
    fails("'%s'.format([optional.none()])");
}

#[test]
fn lists_and_sets_follow_the_documented_examples() {
    holds("[1, 2, 2, 3, 3, 3].distinct() == [1, 2, 3]");
    holds("[1, 'b', 2, 'b'].distinct() == [1, 'b', 2] && [1, 1.0, 1u].distinct() == [1]");
    holds("[1, [2, 3], [4]].flatten() == [1, 2, 3, 4]");
    holds("[1, [2, [3, 4]]].flatten() == [1, 2, [3, 4]]");
    holds("dyn([1, [2, [3, [4]]]]).flatten(2) == [1, 2, 3, [4]]");
    holds("lists.range(5) == [0, 1, 2, 3, 4] && lists.range(-3) == []");
    holds("[5, 3, 1, 2].reverse() == [2, 1, 3, 5]");
    holds("[1, 2, 3, 4].slice(1, 3) == [2, 3] && [1, 2, 3, 4].slice(4, 4) == []");
    holds("['b', 'c', 'a'].sort() == ['a', 'b', 'c'] && [3.5, -1.0].sort() == [-1.0, 3.5]");
    holds("['apple', 'fig', 'kiwi'].sortBy(w, w.size()) == ['fig', 'kiwi', 'apple']");
    holds("[1, 2, 3].first() == optional.of(1) && [].last().orValue('none') == 'none'");
    holds("sets.contains([], []) && !sets.contains([], [1])");
    holds("sets.contains([1, 2.0, 3u], [1.0, 2u, 3])");
    holds("sets.equivalent([1], [1u, 1.0]) && sets.equivalent([1, 2, 3], [3u, 2.0, 1])");
    holds("!sets.intersects([1], []) && sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])");
    fails("[1, 2, 3, 4].slice(3, 1)");
    fails("[1, 2].slice(0, 3)");
    fails("dyn([1, [2]]).flatten(-1)");
    fails("dyn([1, 'b']).sort()");
    fails("dyn([[1], [2]]).sort()");
}

#[test]
fn optionals_chain_and_short_circuit() {
    holds("{'a': {'b': 1}}.?a.?b.orValue(0) == 1 && {'a': {}}.?a.?b.orValue(0) == 0");
    holds("{'a': {'b': 1}}.?a.b == optional.of(1)");
    holds("[1, 2][?5].orValue(9) == 9 && {'k': 2}[?'k'].value() == 2");
    holds("[?optional.none(), ?optional.of(1), 2] == [1, 2]");
    holds("{?'x': optional.none(), 'y': 1} == {'y': 1}");
    holds("optional.of(2).optMap(x, x * 10) == optional.of(20)");
    holds("optional.none().optFlatMap(x, optional.of(x)) == optional.none()");
    holds("optional.unwrap([optional.of(1), optional.none()]) == [1]");
    holds("[optional.of(1), optional.none()].unwrapOpt() == [1]");
    // The argument of `or` and `orValue` is not evaluated when the receiver has a value.
    holds("optional.of(1).orValue(1 / 0) == 1");
    holds("optional.of(1).or(optional.of(1 / 0)) == optional.of(1)");
    holds("!optional.ofNonZeroValue('').hasValue() && optional.ofNonZeroValue([0]).hasValue()");
    holds("type(optional.of(1)) == optional_type");
    fails("optional.none().value()");
    fails("optional.none().orValue(1 / 0)");
}

#[test]
fn two_variable_comprehensions_bind_indices_keys_and_values() {
    holds("[1, 2, 3].all(i, v, i < v)");
    holds("!{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v)");
    holds(
        "{'h': ['hello', 'hi'], 'j': ['joke', 'jog']}.all(k, vals, vals.all(v, v.startsWith(k)))",
    );
    holds("!{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k == v)");
    holds("[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)");
    holds("{'i': 0, 'j': 1, 'k': 2}.exists_one(i, v, i == 'l' || v == 1)");
    holds("[1, 2, 3].transformList(i, v, i * v + v) == [1, 4, 9]");
    holds("[1, 2, 3].transformList(i, v, i % 2 == 0, i * v + v) == [1, 9]");
    holds("{'greeting': 'hello'}.transformList(k, v, k) == ['greeting']");
    holds("[1, 2, 3].transformMap(i, v, i * v + v) == {0: 1, 1: 4, 2: 9}");
    holds("{'greeting': 'hello'}.transformMap(k, v, v + '!') == {'greeting': 'hello!'}");
    holds("{'greeting': 'hello'}.transformMapEntry(k, v, {v: k}) == {'hello': 'greeting'}");
    holds("[1, 2, 3].transformMapEntry(i, v, i > 0, {v: i}) == {2: 1, 3: 2}");
    fails("{'greeting': 'aloha', 'farewell': 'aloha'}.transformMapEntry(k, v, {v: k})");
}

fn refused(source: &str, env: &Env) -> Diagnostic {
    let errors = compile(source, env, &Options::default()).expect_err("refused");
    errors.into_iter().next().expect("a diagnostic")
}

#[test]
fn a_disabled_extension_is_named_where_it_is_needed() {
    let none = Env::filter().with_extensions(Extensions::NONE);
    let d = refused("event.text.lowerAscii().contains('lgtm')", &none);
    assert_eq!(d.code, "unknown-function");
    assert!(d.message.contains("`strings` extension"), "{}", d.message);
    assert!(d.help.unwrap().contains("[extensions]"));
    let d = refused("sets.intersects(event.attributes.labels, ['p0'])", &none);
    assert!(d.message.contains("`sets`"), "{}", d.message);
    let d = refused("event.attributes.?labels.orValue([])", &none);
    assert_eq!(d.code, "unsupported-syntax");
    assert!(d.message.contains("`optional`"), "{}", d.message);
    let d = refused("event.attributes.exists(k, v, v == 1)", &none);
    assert_eq!(d.code, "unsupported-syntax");
    assert!(
        d.message.contains("`two-var-comprehensions`"),
        "{}",
        d.message
    );
    let d = refused("[1].sortBy(x, x)", &none);
    assert!(d.message.contains("`lists`"), "{}", d.message);
    // `reverse` has a strings overload and a lists overload: the one that fits is named.
    let only_lists = Env::filter().with_extensions(Extensions::NONE.with(Extension::Lists));
    assert!(compile("[1].reverse() == [1]", &only_lists, &Options::default()).is_ok());
    let d = refused("event.text.reverse() == ''", &only_lists);
    assert_eq!(d.code, "no-matching-overload");
    assert!(d.help.unwrap().contains("`strings` extension"));
    // A name no extension has still gets a suggestion.
    let d = refused("event.text.lowerAsci()", &Env::filter());
    assert_eq!(d.help.as_deref(), Some("did you mean `lowerAscii`?"));
}

#[test]
fn the_default_environment_is_the_kubernetes_set() {
    let env = Env::filter();
    assert_eq!(env.extensions(), Extensions::KUBERNETES);
    for source in [
        "event.text.lowerAscii().contains('lgtm')",
        "event.attributes.?labels.orValue([]).size() > 0",
        "event.text.split(' ').exists(w, w == 'fix')",
        "sets.intersects(['urgent', 'p0'], ['p0'])",
        "event.attributes.exists(k, v, k == 'draft' && v == true)",
    ] {
        compile(source, &env, &Options::default()).unwrap_or_else(|d| panic!("{source}: {d:?}"));
    }
}

#[test]
fn types_follow_the_extensions() {
    let ty = |s: &str| {
        compile(s, &env(), &Options::default())
            .unwrap_or_else(|d| panic!("{s}: {d:?}"))
            .result_type()
            .to_string()
    };
    assert_eq!(ty("s.split(',')"), "list(string)");
    assert_eq!(ty("{'a': 1}.?a"), "optional_type(int)");
    assert_eq!(ty("optional.of({'a': [1]}).a"), "optional_type(list(int))");
    assert_eq!(
        ty("[1, 2].transformMap(i, v, double(v) * 1.5)"),
        "map(int, double)"
    );
    assert_eq!(
        ty("{'a': 1}.transformMapEntry(k, v, {v: k})"),
        "map(int, string)"
    );
    assert_eq!(
        ty("[optional.none(), optional.of('x')]"),
        "list(optional_type(string))"
    );
    assert_eq!(ty("[[1], [2]].flatten()"), "list(int)");
    assert_eq!(ty("[1].first()"), "optional_type(int)");
    let d = refused("[1].exists(i, v, v)", &env());
    assert_eq!(d.code, "no-matching-overload");
    let d = refused("[[1]].sort()", &env());
    assert_eq!(d.code, "no-matching-overload");
    let d = refused("[1].optMap(x, x)", &env());
    assert_eq!(d.code, "not-iterable");
}

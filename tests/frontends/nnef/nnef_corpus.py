"""Small NNEF documents: (name, text, expected) with expected = None (valid) or a substring of the error."""

from __future__ import annotations

H = "version 1.0;\n"
F = "extension KHR_enable_fragment_definitions;\n"
O = "extension KHR_enable_operator_expressions;\n"  # noqa: E741 (the extension letters H, F, O)
HFO = H + F + O
X = "x = external(shape = [1, 4]);"

VALID: list[tuple[str, str]] = [
    ("extensions_white_space", H + "extension KHR_enable_fragment_definitions KHR_enable_operator_expressions;\n"
     f"graph g(x) -> (y) {{ {X} y = x * 2.0; }}"),
    ("flat_relu", H + f"graph g(x) -> (y) {{ {X} y = relu(x); }}"),
    ("flat_conv_pool", H + "graph g(x) -> (y) { x = external(shape = [1, 3, 8, 8]);"
     " w = variable(shape = [4, 3, 3, 3], label = 'w'); b = variable(shape = [1, 4], label = 'b');"
     " c = conv(x, w, b, padding = [(1,1),(1,1)]); y = max_pool(c, size = [1,1,2,2], stride = [1,1,2,2]); }"),
    ("flat_tuple_lhs_split", H + "graph g(x) -> (a, b) { x = external(shape = [1, 4]);"
     " [a, b] = split(x, axis = 1, ratios = [1, 1]); }"),
    ("flat_negative_literal", H + f"graph g(x) -> (y) {{ {X} y = leaky_relu(x, alpha = -0.5); }}"),
    ("flat_generic_explicit", H + "graph g(x) -> (y) { x = external<integer>(shape = [2]);"
     " y = copy<integer>(x); }"),
    ("flat_string_escape", H + "graph g(x) -> (y) { x = external(shape = [2]);"
     " y = variable(shape = [2], label = 'a\\\\b'); }"),
    ("comments_crlf", H.replace("\n", "\r\n") + "# comment\r\ngraph g(x) -> (y)\r\n{ # c\r\n"
     f" {X} y = copy(x);\r\n}}"),
    ("operators_expr", H + O + f"graph g(x) -> (y) {{ {X} y = (x + 1.0) * 2.0 - x / 3.0; }}"),
    ("fragment_generic", HFO + "fragment twice<?>( a: tensor<?> ) -> ( b: tensor<?>[] ) { b = [a, a]; }\n"
     f"graph g(x) -> (y, z) {{ {X} [y, z] = twice(x); }}"),
    ("fragment_default_and_if", HFO + "fragment f( a: tensor<scalar>, k: integer = 2, neg: logical = false )"
     " -> ( b: tensor<scalar> ) { s = scalar(k); b = -a * s if neg else a * s; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x, neg = true); }}"),
    ("comprehension_filter", HFO + "fragment pick( a: tensor<scalar>, axes: integer[] ) -> ( b: tensor<scalar> )"
     " { keep = [for i in range_of(shape_of(a)) if !(i in axes) yield i];"
     " b = sum_reduce(a, axes = keep); }\n"
     "graph g(x) -> (y) { x = external(shape = [2, 3, 4]); y = pick(x, axes = [1]); }"),
    ("comprehension_zip", HFO + "fragment f( a: tensor<scalar>, p: integer[], q: integer[] ) -> ( b: tensor<scalar> )"
     " { s = [for i in p, j in q yield i * j]; b = reshape(a, shape = s); }\n"
     "graph g(x) -> (y) { x = external(shape = [2, 6]); y = f(x, p = [1, 3], q = [4, 1]); }"),
    ("recursion_add_n", H + O + "graph g(a, b, c) -> (y) { a = external(shape = [1, 2]);"
     " b = external(shape = [1, 2]); c = external(shape = [1, 2]); y = add_n([a, b, c]); }"),
    ("unsqueeze_stack", H + "graph g(a, b) -> (y) { a = external(shape = [2, 3]); b = external(shape = [2, 3]);"
     " y = stack([a, b], axis = 1); }"),
    ("tuple_subscript", HFO + "fragment f( a: tensor<scalar>, t: (integer, scalar) ) -> ( b: tensor<scalar> )"
     " { b = a * t[1]; }\n" f"graph g(x) -> (y) {{ {X} y = f(x, t = (1, 2.5)); }}"),
    ("string_ops", HFO + "fragment f( a: tensor<scalar>, s: string ) -> ( b: tensor<scalar> )"
     " { n = s + '_' + string(length_of(s)); b = a if n == 'ab_2' else -a; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x, s = 'ab'); }}"),
    ("logical_words", HFO + "fragment f( a: tensor<scalar>, p: logical, q: logical ) -> ( b: tensor<scalar> )"
     " { b = a if p and q || !p else -a; }\n" f"graph g(x) -> (y) {{ {X} y = f(x, p = true, q = false); }}"),
    ("moments_tuple", H + "graph g(x) -> (m, v) { x = external(shape = [2, 3]); m, v = moments(x, axes = [1]); }"),
    ("linear_matmul", H + "graph g(x) -> (y) { x = external(shape = [2, 3]); w = variable(shape = [5, 3], label = 'w');"
     " y = linear(x, w); }"),
    ("power_right_assoc", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> )"
     " { n = 2 ^ 3 ^ 2; b = a * scalar(n); }\n" f"graph g(x) -> (y) {{ {X} y = f(x); }}"),
    # audit additions: unusual but valid grammar
    ("nested_generic_calls", HFO + "fragment f1<?>( a: tensor<?> ) -> ( b: tensor<?> ) { b = copy<?>(a); }\n"
     "fragment f2<?>( a: tensor<?> ) -> ( b: tensor<?>, c: tensor<?> ) { b = f1<?>(a); c = f1(b); }\n"
     f"graph g(x) -> (y, z) {{ {X} y, z = f2(x); }}"),
    ("default_tuple_array", HFO + "fragment p( a: tensor<scalar>, pad: (integer, integer)[] = [(0, 0), (1, 1)] )"
     " -> ( b: tensor<scalar> ) { b = box(a, size = [1, 3], padding = pad); }\n"
     f"graph g(x) -> (y) {{ {X} y = p(x); }}"),
    ("lazy_invalid_branch", HFO + "fragment f( a: tensor<scalar>, s: integer[] ) -> ( b: tensor<scalar> )"
     " { b = a * scalar(s[5]) if length_of(s) > 5 else a; }\n" f"graph g(x) -> (y) {{ {X} y = f(x, s = [1]); }}"),
    ("ragged_nested_arrays", HFO + "fragment f( a: tensor<scalar>, m: integer[][] ) -> ( b: tensor<scalar> )"
     " { b = reshape(a, shape = [for r in m yield length_of(r)] + m[1][4:]); }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x, m = [[3], [1, 2, 3, 4]]); }}"),
    ("tensor_array_result", HFO + "fragment two( a: tensor<scalar> ) -> ( b: tensor<scalar>[] )"
     " { [p, q] = split(a, axis = 1, ratios = [1, 3]); b = [q, p]; }\n"
     f"graph g(x) -> (y, z) {{ {X} [y, z] = two(x); }}"),
    ("subscripted_result", HFO + "fragment two( a: tensor<scalar> ) -> ( b: tensor<scalar>[] )"
     " { b = split(a, axis = 1, ratios = [1, 1]); }\n"
     "fragment second( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { b = two(a)[1]; }\n"
     "graph g(x) -> (y) { x = external(shape = [1, 4]); y = second(x); }"),
    ("recursion_three_levels", HFO + "fragment a1( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { b = a + 1.0; }\n"
     "fragment a2( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { b = a1(a1(a)); }\n"
     "fragment a3( a: tensor<scalar>, n: integer ) -> ( b: tensor<scalar> )"
     " { b = a3(a2(a), n = n - 1) if n > 0 else a; }\n" f"graph g(x) -> (y) {{ {X} y = a3(x, n = 3); }}"),
    ("logical_tensor_operators", H + O + f"graph g(x) -> (y) {{ {X} y = select(x > 0.0 && !(x > 1.0), x, 0.0); }}"),
    ("unary_plus_tensor", H + O + f"graph g(x) -> (y) {{ {X} y = +x; }}"),
    ("tuple_array_param", HFO + "fragment f( a: tensor<scalar>, t: (integer, scalar)[] ) -> ( b: tensor<scalar> )"
     " { b = a * t[1][1] + scalar(t[0][0]); }\n" f"graph g(x) -> (y) {{ {X} y = f(x, t = [(1, 2.0), (3, 4.0)]); }}"),
    ("in_binds_loosest_valid", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> )"
     " { b = a if 1 + 1 in [2] else -a; }\n" f"graph g(x) -> (y) {{ {X} y = f(x); }}"),
    ("optional_window_prefixes", HFO + "fragment mp( a: tensor<scalar>, size: integer[], stride: integer[] = [] )"
     " -> ( b: tensor<scalar> ) { b = max_pool(a, size = [1, 1] + size, border = 'ignore',"
     " stride = [1, 1] + stride if length_of(stride) > 0 else []); }\n"
     "graph g(x) -> (y, z) { x = external(shape = [1, 2, 6, 6]); y = mp(x, size = [3, 3], stride = [2, 2]);"
     " z = mp(x, size = [2, 2]); }"),
]

INVALID: list[tuple[str, str, str]] = [
    ("extensions_comma", H + "extension KHR_enable_fragment_definitions, KHR_enable_operator_expressions;\n"
     f"graph g(x) -> (y) {{ {X} y = x * 2.0; }}", "separated by white space, not ','"),
    ("no_version", f"graph g(x) -> (y) {{ {X} y = relu(x); }}", "expected 'version'"),
    ("version_major", "version 2.0;\n" f"graph g(x) -> (y) {{ {X} y = relu(x); }}", "unsupported NNEF version"),
    ("missing_semicolon", H + f"graph g(x) -> (y) {{ {X} y = relu(x) }}", "expected ';'"),
    ("keyword_identifier", H + "graph g(x) -> (yield) { x = external(shape = [1]); yield = relu(x); }",
     "keyword 'yield'"),
    ("identifier_digit", H + "graph g(x) -> (y) { x = external(shape = [1]); y = relu(1x); }", "must not start with a digit"),
    ("bad_escape", H + "graph g(x) -> (y) { x = external(shape = [1]); y = variable(shape=[1], label='a\\n'); }",
     "must be escaped"),
    ("unterminated_string", H + "graph g(x) -> (y) { x = external(shape = [1]); y = variable(shape=[1], label='a); }",
     "unterminated string"),
    ("operators_without_extension", H + f"graph g(x) -> (y) {{ {X} y = x + x; }}", "KHR_enable_operator_expressions"),
    ("fragment_without_extension", H + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { b = a; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x); }}", "KHR_enable_fragment_definitions"),
    ("nested_invocation_flat", H + f"graph g(x) -> (y) {{ {X} y = relu(relu(x)); }}", "nested invocations"),
    ("undefined_identifier", H + f"graph g(x) -> (y) {{ {X} y = relu(z); }}", "identifier 'z' is used before it is defined"),
    ("use_before_define", H + "graph g(x) -> (y) { x = external(shape = [1]); y = relu(t); t = relu(x); }",
     "identifier 't' is used before it is defined"),
    ("double_assignment", H + f"graph g(x) -> (y) {{ {X} y = relu(x); y = relu(x); }}", "assigned more than once"),
    ("input_not_external", H + "graph g(x) -> (y) { x = variable(shape = [1], label = 'v'); y = relu(x); }",
     "must be defined by 'external'"),
    ("output_never_assigned", H + f"graph g(x) -> (y, z) {{ {X} y = relu(x); }}", "graph output 'z' is never assigned"),
    ("unknown_operation", H + f"graph g(x) -> (y) {{ {X} y = frobnicate(x); }}", "'frobnicate' is not a declared operation"),
    ("attribute_positional", H + f"graph g(x) -> (y) {{ {X} y = softmax(x, [1]); }}", "attribute values must be named"),
    ("unknown_named_argument", H + f"graph g(x) -> (y) {{ {X} y = softmax(x, axis = [1]); }}", "no parameter named 'axis'"),
    ("duplicate_named_argument", H + f"graph g(x) -> (y) {{ {X} y = box(x, size = [1, 1], size = [1, 1]); }}",
     "assigned more than once"),
    ("missing_argument", H + f"graph g(x) -> (y) {{ {X} y = reshape(x); }}", "missing argument for parameter 'shape'"),
    ("too_many_arguments", H + f"graph g(x) -> (y) {{ {X} y = relu(x, x); }}", "takes 1 parameters but 2"),
    ("positional_after_named", H + f"graph g(x) -> (y) {{ {X} y = add(x = x, x); }}", "positional argument 2"),
    ("wrong_attribute_type", H + f"graph g(x) -> (y) {{ {X} y = softmax(x, axes = 1); }}", "cannot be cast"),
    ("integer_for_scalar", H + f"graph g(x) -> (y) {{ {X} y = leaky_relu(x, alpha = 1); }}", "cannot be cast"),
    ("generic_default_not_deduced", H + "graph g(x) -> (y) { x = external(shape = [1]);"
     " c = constant(shape = [1], value = [1]); y = add(x, c); }", "cannot be cast"),
    ("mixed_int_scalar", H + O + f"graph g(x) -> (y) {{ {X} y = x + 1; }}", "operand of type integer cannot be passed"),
    ("primitive_in_graph", H + O + f"graph g(x) -> (y) {{ {X} k = 2.0; y = x * k; }}", "must be a single tensor"),
    ("fragment_duplicate_param", HFO + "fragment f( a: tensor<scalar>, a: tensor<scalar> ) -> ( b: tensor<scalar> )"
     f" {{ b = a; }}\ngraph g(x) -> (y) {{ {X} y = f(x, x); }}", "more than once"),
    ("fragment_attr_before_tensor", HFO + "fragment f( k: integer, a: tensor<scalar> ) -> ( b: tensor<scalar> )"
     f" {{ b = a; }}\ngraph g(x) -> (y) {{ {X} y = f(k = 1, a = x); }}", "tensor parameters must precede attributes"),
    ("fragment_mixed_results", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar>, n: integer )"
     f" {{ b = a; n = 1; }}\ngraph g(x) -> (y) {{ {X} y, n = f(x); }}", "all tensors or all attributes"),
    ("fragment_bad_default", HFO + "fragment f( a: tensor<scalar>, k: integer = 1.5 ) -> ( b: tensor<scalar> )"
     f" {{ b = a; }}\ngraph g(x) -> (y) {{ {X} y = f(x); }}", "default value of 'k'"),
    ("generic_not_declared", HFO + "fragment f( a: tensor<?> ) -> ( b: tensor<?> ) { b = a; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x); }}", "not declared generic"),
    ("generic_unused", HFO + "fragment f<?>( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { b = a; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x); }}", "has no parameter or result of generic type"),
    ("param_assigned", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { a = relu(a); b = a; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x); }}", "must not appear on the left-hand side"),
    ("result_unassigned", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar>, c: tensor<scalar> )"
     f" {{ b = a; }}\ngraph g(x) -> (y, z) {{ {X} y, z = f(x); }}", "result 'c' of fragment 'f' is never assigned"),
    ("external_in_fragment", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> )"
     f" {{ e = external(shape = [1]); b = a + e; }}\ngraph g(x) -> (y) {{ {X} y = f(x); }}",
     "'external' must not be used inside a fragment"),
    ("result_primitive_to_tensor", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { b = 1.0; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x); }}", "is declared tensor<scalar> but is assigned a value of type scalar"),
    ("unbound_result", HFO + "fragment f( a: tensor ) -> ( b: tensor ) { b = a; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x); }}", "unbound tensor"),
    ("redefine_standard", HFO + "fragment relu( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { b = a; }\n"
     f"graph g(x) -> (y) {{ {X} y = relu(x); }}", "not unique"),
    ("tuple_arity", H + "graph g(x) -> (m, v, w) { x = external(shape = [2, 3]); m, v, w = moments(x, axes = [1]); }",
     "tuple arity mismatch"),
    ("if_condition_not_logical", HFO + "fragment f( a: tensor<scalar>, k: integer ) -> ( b: tensor<scalar> )"
     f" {{ b = a if k else -a; }}\ngraph g(x) -> (y) {{ {X} y = f(x, k = 1); }}", "must be logical"),
    ("array_no_common_type", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> )"
     f" {{ s = [1, 'a']; b = a; }}\ngraph g(x) -> (y) {{ {X} y = f(x); }}", "common type"),
    ("tuple_subscript_variable", HFO + "fragment f( a: tensor<scalar>, t: (integer, integer), i: integer )"
     " -> ( b: tensor<scalar> ) { n = t[i]; b = a; }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x, t = (1, 2), i = 0); }}", "integer literal"),
    ("graph_not_last", H + f"graph g(x) -> (y) {{ {X} y = relu(x); }}\ngraph h(x) -> (y) {{ {X} y = relu(x); }}",
     "must be the last item"),
    ("empty_body", H + "graph g(x) -> (y) { }", "at least one assignment"),
    # stage 3: argument validity found during expansion
    ("bad_shape_positive", H + "graph g(x) -> (y) { x = external(shape = [0, 2]); y = relu(x); }",
     "items of 'shape' must be positive"),
    ("broadcast_mismatch", H + "graph g(a, b) -> (y) { a = external(shape = [2, 3]); b = external(shape = [2, 4]);"
     " y = add(a, b); }", "do not broadcast"),
    ("conv_channels", H + "graph g(x) -> (y) { x = external(shape = [1, 3, 8, 8]);"
     " w = variable(shape = [4, 2, 3, 3], label = 'w'); y = conv(x, w); }", "must equal input channels"),
    ("reshape_volume", H + "graph g(x) -> (y) { x = external(shape = [2, 3]); y = reshape(x, shape = [4, 2]); }",
     "changes the volume"),
    ("label_shape_conflict", H + "graph g(x) -> (y) { x = external(shape = [1]); v = variable(shape = [2], label = 'W');"
     " w = variable(shape = [3], label = 'w'); y = relu(x); }", "share data"),
    ("sample_ignore_border", H + "graph g(x, i) -> (y) { x = external(shape = [1, 1, 4, 4]);"
     " i = external<integer>(shape = [1, 1, 2, 2]);"
     " y = sample(x, i, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], border = 'ignore'); }", "border 'ignore'"),
    ("index_out_of_range", HFO + "fragment f( a: tensor<scalar>, s: integer[] ) -> ( b: tensor<scalar> )"
     f" {{ b = a * scalar(s[3]); }}\ngraph g(x) -> (y) {{ {X} y = f(x, s = [1]); }}", "out of range"),
    ("infinite_recursion", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> ) { b = f(a); }\n"
     f"graph g(x) -> (y) {{ {X} y = f(x); }}", "recurses"),
    # audit additions
    ("in_binds_loosest", HFO + "fragment f( a: tensor<scalar> ) -> ( b: tensor<scalar> )"
     " { b = a if [1, 2] in [[0], [1, 2]] && true else -a; }\n" f"graph g(x) -> (y) {{ {X} y = f(x); }}",
     "operator '&&' needs two logical operands"),
    ("generic_ambiguous", HFO + "fragment f<?>( a: tensor<?>, b: tensor<?> ) -> ( c: tensor<?> ) { c = a; }\n"
     "graph g(x, i) -> (y) { x = external(shape = [1]); i = external<integer>(shape = [1]); y = f(x, i); }",
     "generic type of 'f' is ambiguous"),
    ("tuple_type_mixed", HFO + "fragment f( a: tensor<scalar>, t: (tensor<scalar>, integer) ) -> ( b: tensor<scalar> )"
     f" {{ b = a; }}\ngraph g(x) -> (y) {{ {X} y = f(x, t = (x, 1)); }}", "mixes tensor and non-tensor"),
    ("graph_input_twice", H + "graph g(x, x) -> (y) { x = external(shape = [1]); y = relu(x); }",
     "lists an input more than once"),
    ("lhs_literal", H + f"graph g(x) -> (y) {{ {X} 1 = relu(x); y = relu(x); }}", "left-hand side of an assignment"),
    ("one_item_tuple_lhs", H + f"graph g(x) -> (y) {{ {X} (y) = relu(x); }}", "a parenthesized single item"),
    ("default_not_literal", HFO + "fragment f( a: tensor<scalar>, k: integer = 1 + 1 ) -> ( b: tensor<scalar> )"
     f" {{ b = a; }}\ngraph g(x) -> (y) {{ {X} y = f(x); }}", "closing the parameter list"),
    ("label_characters", H + f"graph g(x) -> (y) {{ {X} v = variable(shape = [1], label = 'a b'); y = add(x, v); }}",
     "may only contain"),
    ("update_not_variable", H + f"graph g(x) -> (y) {{ {X} z = relu(x); y = update(z, x); }}",
     "must be a variable tensor"),
    ("update_result_again", H + f"graph g(x) -> (y) {{ {X} v = variable(shape = [1, 4], label = 'v');"
     " a = update(v, x); y = update(a, x); }", "must be a variable tensor, found the result of 'update'"),
    ("update_twice", H + f"graph g(x) -> (y) {{ {X} v = variable(shape = [1, 4], label = 'v');"
     " w = variable(shape = [1, 4], label = 'V'); a = update(v, x); y = update(w, x); }",
     "updated more than once"),
    ("deconv_output_shape_auto_padding", H + "graph g(x) -> (y) { x = external(shape = [1, 4, 6, 6]);"
     " w = variable(shape = [4, 2, 3, 3], label = 'w');"
     " y = deconv(x, w, stride = [2, 2], output_shape = [1, 2, 15, 16]); }", "does not down-scale"),
    ("reduce_duplicate_axes", H + f"graph g(x) -> (y) {{ {X} y = sum_reduce(x, axes = [1, 1]); }}",
     "'axes' must be unique"),
    ("window_exceeds_input", H + "graph g(x) -> (y) { x = external(shape = [1, 1, 6, 6]);"
     " y = box(x, size = [1, 1, 9, 9], padding = [(0, 0), (0, 0), (0, 0), (0, 0)]); }", "smaller than the dilated"),
    ("squeeze_not_singleton", H + f"graph g(x) -> (y) {{ {X} y = squeeze(x, axes = [1]); }}",
     "standard fragment 'squeeze'"),
    ("softmax_axis_out_of_range", H + f"graph g(x) -> (y) {{ {X} y = softmax(x, axes = [2]); }}",
     "out of range for rank 2"),
    ("unsqueeze_axis_out_of_range", H + f"graph g(x) -> (y) {{ {X} y = unsqueeze(x, axes = [7]); }}",
     "less than the rank of output (3), found [7]"),
    ("squeeze_duplicate_axes", H + "graph g(x) -> (y) { x = external(shape = [1, 3]); y = squeeze(x, axes = [0, 0]); }",
     "'axes' lists an axis twice"),
    ("external_not_a_parameter", H + "graph g(x) -> (y) { x = external(shape = [1]); z = external(shape = [1]);"
     " y = add(x, z); }", "'z' is defined by 'external' but is not a parameter of graph 'g'"),
    ("integer_literal_over_64_bits", H + "graph g(x) -> (y) { x = external(shape = [1" + "0" * 5000 + "]); y = relu(x); }",
     "integer literal 1000"),
    ("integer_result_over_64_bits", HFO + "graph g(x) -> (y) { x = external(shape = [1]);"
     " y = add(x, [1.0][(2 ^ 62) * 4]); }", "overflows 64 bits"),
    ("doubling_recursion_over_budget", HFO + "fragment f( n: integer ) -> ( y: integer )"
     " { y = f(n = n - 1) + f(n = n - 1) if n > 0 else 1; }\n"
     "graph g(x) -> (y) { x = external(shape = [1]); y = add(x, scalar(f(n = 40))); }", "takes more than"),
    ("doubling_operations_over_cap", HFO + "fragment f( x: tensor<scalar>, n: integer ) -> ( y: tensor<scalar> )"
     " { y = add(f(x, n = n - 1), f(x, n = n - 1)) if n > 0 else relu(x); }\n"
     "graph g(x) -> (y) { x = external(shape = [1]); y = f(x, n = 40); }", "more than 65536 operations"),
    ("nested_comprehension_over_budget", HFO + "graph g(x) -> (y) { x = external(shape = [1]); y = add(x, "
     "scalar(length_of([for i in range_of([0] * 1048576) yield [for j in range_of([0] * 1048576) yield j]]))); }",
     "takes more than"),
]

# Rules checked only during expansion (stage 3 of §6); parse_document alone accepts these.
STAGE3 = {"bad_shape_positive", "broadcast_mismatch", "conv_channels", "reshape_volume", "label_shape_conflict",
          "sample_ignore_border", "index_out_of_range", "infinite_recursion", "update_not_variable",
          "update_result_again", "update_twice", "deconv_output_shape_auto_padding", "reduce_duplicate_axes",
          "window_exceeds_input", "squeeze_not_singleton", "softmax_axis_out_of_range", "label_characters",
          "unsqueeze_axis_out_of_range", "squeeze_duplicate_axes", "integer_result_over_64_bits",
          "doubling_recursion_over_budget", "nested_comprehension_over_budget", "doubling_operations_over_cap"}

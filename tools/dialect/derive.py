#!/usr/bin/env python3
"""Derives irw's Paddle dialect data (`data/dialect/pd_op.ops`) from Paddle's own op definitions.

Usage (once per Paddle version; the output is committed):

    python3 tools/dialect/derive.py PADDLE_INCLUDE_DIR > data/dialect/pd_op.ops

where PADDLE_INCLUDE_DIR is the `paddle/include/paddle` directory of an installed Paddle wheel
(3.3.1: `<venv>/lib/python3.11/site-packages/paddle/include/paddle`). Standard library only.

What it reads, and why each source:

- `fluid/pir/dialect/operator/ir/pd_op.h` and `manual_op.h`, the PIR op classes Paddle generates
  from its yaml: `name()`, the operand accessors (`pir::Value x() { return operand_source(0); }`)
  and result accessors (`result(0)`) in order, the first `Build(...)` overload, whose C++
  parameters after the operands are the attributes *with the C++ types PIR stores them as*
  (`float epsilon=1e-5` is a `pir::FloatAttribute`, `const std::vector<int64_t>& strides` an array
  of `pir::Int64Attribute`), with their defaults, and the traits (`InplaceTrait`). A parameter
  that is also an operand accessor is a mutable attribute (IntArray or Scalar passed as a tensor,
  e.g. `mean`'s `axis`): it is an operand, not an attribute.
- `phi/api/include/api.h` and `fused_api.h`, the C++ API generated from the same yaml: which
  inputs are `paddle::optional` (may be `<<NULL VALUE>>`), which attributes are `IntArray` or
  `Scalar` (the PIR header spells them as plain vectors and numbers, but PIR stores an
  `IntArray` as `paddle::dialect::IntArrayAttribute`, `1.a_intarray` in JSON), and which outputs
  an in-place op returns by reference (`std::tuple<Tensor&, ...> adam_(Tensor& param, ...)`: a
  reference output named after an input passed by non-const reference, `moment_out`, is that
  input; the others are those inputs in order).
- A `_grad` op (no C++ API) takes `optional` and `IntArray`/`Scalar` from its forward op, by name.

Nothing is copied: each line written is irw's own format (`src/dialect/data.rs` documents it):

    NAME(OPERANDS) -> (RESULTS) {ATTRS} [inplace(RESULT=OPERAND, ...)]

`x?` marks an optional operand or result (present as a null value when absent); an attribute is
`name: TYPE` or `name: TYPE = DEFAULT`, with TYPE one of bool i32 i64 f32 f64 str dtype place
intarray scalar scalar(f32) ... and `[]` for arrays. Effect classes beyond in-place, result-type
families and ops Paddle does not generate (builtin, cf, control flow) are irw's own hand-written
data in `data/dialect/irw.ops`.
"""

import os
import re
import sys

CPP_TYPES = {
    "bool": "bool",
    "int": "i32",
    "int64_t": "i64",
    "float": "f32",
    "double": "f64",
    "const std::string&": "str",
    "std::string": "str",
    "const std::vector<int>&": "i32[]",
    "const std::vector<int64_t>&": "i64[]",
    "const std::vector<float>&": "f32[]",
    "const std::vector<double>&": "f64[]",
    "const std::vector<std::string>&": "str[]",
    "std::vector<phi::Scalar>": "scalar[]",
    "phi::DataType": "dtype",
    "const phi::Place&": "place",
}


def split_params(s):
    """Splits a C++ parameter list at top-level commas."""
    out, depth, cur = [], 0, ""
    s = s.replace("<<", "\x00")
    for ch in s:
        if ch in "(<{[":
            depth += 1
        elif ch in ")>}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [x.replace("\x00", "<<") for x in out]


def param(p):
    """`const std::vector<int64_t>& axis={}` -> (type, name, default or None)."""
    default = None
    if "=" in p:
        p, default = p.split("=", 1)
        p, default = p.strip(), default.strip()
    m = re.match(r"^(.*?)\s*([A-Za-z_][A-Za-z_0-9]*)$", p)
    return m.group(1).strip(), m.group(2), default


def default_text(cpp_default, cpp_type=""):
    """A C++ default as irw's data writes it."""
    if cpp_default is None:
        return None
    d = cpp_default
    if d.startswith("phi::DataType::"):
        return d[len("phi::DataType::"):].lower()
    if d.endswith("Place()") or d == "{}" and cpp_type.endswith("Place&"):
        return {
            "phi::CPUPlace()": "cpu",
            "phi::Place()": "undefined",
            "{}": "undefined",
            "phi::GPUPlace()": "gpu",
        }.get(d, d)
    if d.startswith('"'):
        return d
    if d.startswith("{"):
        inner = d[1:-1].strip()
        items = [default_text(x.strip()) for x in split_params(inner)] if inner else []
        return "[" + ", ".join(items) + "]"
    if d in ("true", "false"):
        return d
    d = d.rstrip("fF") if re.match(r"^-?[0-9.]+(e-?[0-9]+)?[fF]$", d) else d
    if re.match(r"^-?[0-9]+[lL]*$", d):
        return d.rstrip("lL")
    if re.match(r"^-?[0-9.]+(e[-+]?[0-9]+)?$", d):
        return d
    if d in ("std::numeric_limits<float>::max()", "FLT_MAX"):
        return "3.40282e+38"
    return None  # an expression irw does not evaluate: no default


def parse_classes(text):
    """The op classes of a generated PIR header: name, operands, results, attrs, inplace."""
    ops = []
    for m in re.finditer(r"\nclass ([^{;]*?)\s*:\s*public pir::Op<(.*?)>\s*\{\n(.*?)\n\};", text, re.S):
        traits = m.group(2)
        # manual_op.h is clang-formatted over several lines: one space per whitespace run.
        body = re.sub(r"//[^\n]*", "", m.group(3))
        body = re.sub(r"\s+", " ", body).replace("( ", "(").replace(" )", ")")
        body = re.sub(r" &(\w)", r"& \1", body).replace(" &argument", "& argument")
        nm = re.search(r'static const char \*name\(\) \{ return "([^"]+)"; \}', body)
        if not nm:
            continue
        operands = re.findall(r"pir::Value (\w+)\(\) \{ return operand_source\((\d+)\); \}", body)
        results = re.findall(r"pir::Value (\w+)\(\) \{ return result\((\d+)\); \}", body)
        operands = [n for n, i in sorted(operands, key=lambda x: int(x[1]))]
        results = [n for n, i in sorted(results, key=lambda x: int(x[1]))]
        builds = re.findall(
            r"static void Build\(pir::Builder ?& ?builder, pir::OperationArgument ?& ?argument(.*?)\);", body
        )
        attrs = []
        for b in builds:
            if "pir::AttributeMap" in b:
                continue
            params = split_params(b.lstrip(", ")) if b.strip() else []
            for p in params:
                ty, name, default = param(p)
                if ty == "pir::Value" or name in operands:
                    continue
                attrs.append((name, ty, default))
            break
        n_attr = re.search(r"static constexpr uint32_t attributes_num = (\d+);", body)
        ops.append(
            {
                "name": nm.group(1),
                "operands": operands,
                "results": results,
                "attrs": attrs,
                "attributes_num": int(n_attr.group(1)) if n_attr else 0,
                "inplace_trait": "InplaceTrait" in traits,
                "unary": "UnaryElementWiseTrait" in traits,
                "binary": "BinaryElementWiseTrait" in traits,
                "side_effect": "SideEffectTrait" in traits,
            }
        )
    return ops


def parse_api(text):
    """`PADDLE_API RET name(PARAMS);` -> {name: (ret, [(type, name, default)])}."""
    apis = {}
    for m in re.finditer(r"PADDLE_API (.+?) (\w+)\((.*?)\);", text):
        ret, name, params = m.group(1), m.group(2), m.group(3)
        apis.setdefault(name, (ret, [param(p) for p in split_params(params)]))
    return apis


def api_facts(api):
    """From one C++ API signature: optional inputs, IntArray/Scalar attrs, in-place inputs."""
    ret, params = api
    optional, kinds, by_ref = set(), {}, []
    for ty, name, _ in params:
        if "optional<paddle::Tensor*>" in ty or "optional<std::tuple" in ty:
            continue
        if "paddle::optional<Tensor>" in ty or "paddle::optional<std::vector<Tensor>>" in ty:
            optional.add(name)
        if re.match(r"^(paddle::optional<(std::vector<)?Tensor>?>|(std::vector<)?Tensor>?)&$", ty):
            by_ref.append(name)
        if "IntArray" in ty:
            kinds[name] = "intarray"
        elif "Scalar" in ty and "vector" not in ty:
            kinds[name] = "scalar"
    outs = split_params(ret[len("std::tuple<"):-1]) if ret.startswith("std::tuple<") else [ret]
    ref_outs = [i for i, o in enumerate(outs) if o.endswith("&")]
    return optional, kinds, by_ref, ref_outs


def attr_type(cpp_type, kind):
    t = CPP_TYPES.get(cpp_type)
    if t is None:
        return None
    if kind == "intarray" and t in ("i64[]", "i32[]"):
        return "intarray"
    if kind == "scalar" and t in ("f32", "f64", "i32", "i64", "bool"):
        return "scalar(" + t + ")"
    return t


def main():
    inc = sys.argv[1]
    ir = os.path.join(inc, "fluid/pir/dialect/operator/ir")
    ops = []
    for h in ("pd_op.h", "manual_op.h"):
        ops += parse_classes(open(os.path.join(ir, h)).read())
    apis = {}
    for h in ("api.h", "fused_api.h"):
        p = os.path.join(inc, "phi/api/include", h)
        if os.path.exists(p):
            for k, v in parse_api(open(p).read()).items():
                apis.setdefault(k, v)
    seen = set()
    by_name = {}
    for op in ops:
        if op["name"] in seen:
            continue
        seen.add(op["name"])
        by_name[op["name"]] = op
    print("# Paddle's PIR ops as irw's dialect data: derived by tools/dialect/derive.py from the")
    print("# headers of Paddle 3.3.1 (pd_op.h, manual_op.h, phi/api/include/api.h). Do not edit:")
    print("# irw's own facts (effects, shape families, builtin and control-flow ops) are irw.ops.")
    skipped = 0
    for name in sorted(by_name):
        op = by_name[name]
        short = name.split(".", 1)[1]
        fwd = short
        if short.endswith("_grad"):
            fwd = re.sub(r"(_double|_triple)?_grad$", "", short)
        optional, kinds, by_ref, ref_outs = set(), {}, [], []
        api = apis.get(short)
        if api:
            optional, kinds, by_ref, ref_outs = api_facts(api)
        fapi = apis.get(fwd) or apis.get(fwd.rstrip("_"))
        if fapi and not api:
            fo, fk, _, _ = api_facts(fapi)
            optional, kinds = fo, fk
        attrs = []
        ok = True
        for an, ty, default in op["attrs"]:
            t = attr_type(ty, kinds.get(an))
            if t is None:
                ok = False
                break
            d = default_text(default, ty)
            attrs.append(f"{an}: {t}" + (f" = {d}" if d is not None else ""))
        if not ok or len(attrs) != op["attributes_num"]:
            # An attribute type irw has no name for: the op is left out rather than half-known.
            skipped += 1
            print(f"# skipped {name}: attribute types not derivable")
            continue
        operands = [o + ("?" if o in optional else "") for o in op["operands"]]
        results = list(op["results"])
        inplace = []
        if op["inplace_trait"] and api and by_ref and ref_outs:
            # The API returns its by-reference inputs in the order of its outputs, which is not
            # always the order it takes them in (rmsprop_ takes mean_square before moment and
            # returns moment_out first): an output named after such an input (`moment_out`,
            # `master_param_outs`) is that input; the others pair up in order.
            refs = [results[r] for r in ref_outs if r < len(results)]
            named = {}
            for r in refs:
                base = re.sub(r"_outs?$", "", r)
                if base != r and base in by_ref:
                    named[r] = base
            rest = iter(o for o in by_ref if o not in named.values())
            for r in refs:
                o = named.get(r) or next(rest, None)
                if o in op["operands"]:
                    inplace.append(f"{r}={o}")
        elif op["inplace_trait"]:
            # No C++ API: result `x_out` is operand `x`; without such pairs, `out` is the
            # first operand.
            for r in results:
                o = r[: -len("_out")] if r.endswith("_out") else None
                if o in op["operands"]:
                    inplace.append(f"{r}={o}")
            if not inplace and "out" in results and op["operands"]:
                inplace.append(f"out={op['operands'][0]}")
        line = f"{name}({', '.join(operands)}) -> ({', '.join(results)})"
        if attrs:
            line += " {" + ", ".join(attrs) + "}"
        if inplace:
            line += " inplace(" + ", ".join(inplace) + ")"
        # Effects Paddle's definitions say: a side-effect trait (irw: effects it does not model),
        # a `seed` attribute (draws random numbers). Shape families its traits say.
        attr_names = [a[0] for a in op["attrs"]]
        if op["side_effect"]:
            line += " effect=unknown"
        elif ("seed" in attr_names or "fix_seed" in attr_names) and not name.endswith(("_grad", "_grad_")):
            line += " effect=random"
        if op["unary"] and op["operands"]:
            line += " shape=unchanged"
        elif op["binary"] and len(op["operands"]) >= 2:
            line += " shape=elementwise"
        print(line)
    print(f"# {len(by_name) - skipped} ops, {skipped} skipped", file=sys.stderr)


if __name__ == "__main__":
    main()

//! Attribute values, dictionaries and distribution attributes from the grammar's parse
//! trees (the reference path, and the pieces the fast path hands to pest).

use super::*;

/// Parses one dictionary (`{k:v,...}`, a slice of `src`) into an [`AttrDict`].
pub(super) fn parse_dict_text(src: &SourceFile, text: &str) -> Result<AttrDict, Diagnostic> {
    let pairs = PirParser::parse(Rule::attr_dict_full, text).map_err(|e| {
        let pos = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        };
        err_at(
            src,
            &text[pos.min(text.len())..],
            "malformed attribute dictionary",
        )
    })?;
    match pairs.flatten().find(|p| p.as_rule() == Rule::dict) {
        Some(p) => dict(src, p),
        None => Ok(AttrDict::default()),
    }
}

pub(super) fn dict(src: &SourceFile, p: Pair<'_, Rule>) -> Result<AttrDict, Diagnostic> {
    let mut d = AttrDict::default();
    for entry in p.into_inner() {
        let mut it = entry.into_inner();
        let (Some(k), Some(v)) = (it.next(), it.next()) else {
            continue;
        };
        if d.contains_key(k.as_str()) {
            return Err(err_at(
                src,
                k.as_str(),
                format!("duplicate attribute `{}`", k.as_str()),
            ));
        }
        let value = attr_value(src, v)?;
        d.push(k.as_str(), value);
    }
    Ok(d)
}

pub(super) fn attr_value(src: &SourceFile, p: Pair<'_, Rule>) -> Result<Attr, Diagnostic> {
    let s = p.as_str();
    Ok(match p.as_rule() {
        Rule::dict => Attr::Dict(dict(src, p)?),
        Rule::op_dist => Attr::OpDist(Box::new(
            op_dist(p).map_err(|at| err_at(src, at, "malformed op_dist_attr"))?,
        )),
        Rule::array => Attr::Array(
            p.into_inner()
                .map(|q| attr_value(src, q))
                .collect::<Result<_, _>>()?,
        ),
        Rule::string => Attr::Str(s[1..s.len() - 1].into()),
        Rule::number => {
            let is_int = !s.contains(['.', 'e', 'E', 'i', 'n']);
            if is_int {
                match s.parse::<i64>() {
                    Ok(i) if i.to_string() == s => Attr::Int(i),
                    // `-0` (Paddle prints a float -0.0 so) keeps its sign; `+5`, `007`: their
                    // value.
                    Ok(i) => Attr::Float {
                        value: s.parse::<f64>().unwrap_or(i as f64),
                        text: s.into(),
                    },
                    Err(_) => {
                        return Err(err_at(
                            src,
                            s,
                            format!("integer {s} does not fit in 64 bits"),
                        ))
                    }
                }
            } else {
                let value = s
                    .parse::<f64>()
                    .map_err(|_| err_at(src, s, format!("malformed number {s}")))?;
                Attr::Float {
                    value,
                    text: s.into(),
                }
            }
        }
        Rule::word => match s {
            "true" => Attr::Bool(true),
            "false" => Attr::Bool(false),
            _ => Attr::Word(s.into()),
        },
        _ => Attr::Word(s.into()),
    })
}

// ---- distribution attributes ------------------------------------------------------------

/// An integer of the distribution grammar; the error is the text it failed at.
pub(super) fn dist_int(p: Pair<'_, Rule>) -> Result<i64, &str> {
    p.as_str().parse().map_err(|_| p.as_str())
}

pub(super) fn int_list(p: Pair<'_, Rule>) -> Result<Vec<i64>, &str> {
    p.into_inner().map(dist_int).collect()
}

/// `mesh_shape:[..],process_ids:[..],dims_mappings:[..], partial(..), placements:[..]`.
pub(super) fn tensor_dist(p: Pair<'_, Rule>) -> Result<TensorDist, &str> {
    let mut lists = Vec::with_capacity(3);
    let mut t = TensorDist::default();
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::int_list => lists.push(int_list(q)?),
            Rule::partial_status => {
                let mut it = q.into_inner();
                let (Some(dim), Some(r)) = (it.next(), it.next()) else {
                    continue;
                };
                t.partial
                    .push((dist_int(dim)?, ReduceKind::from_name(r.as_str())));
            }
            Rule::placements => {
                t.placements = Some(
                    q.into_inner()
                        .map(|x| Placement::parse(x.as_str()))
                        .collect(),
                )
            }
            _ => {}
        }
    }
    let mut lists = lists.into_iter();
    t.mesh_shape = lists.next().unwrap_or_default();
    t.process_ids = lists.next().unwrap_or_default();
    t.dims_mapping = lists.next().unwrap_or_default();
    Ok(t)
}

pub(super) fn dist_slot_value(p: Pair<'_, Rule>) -> Result<DistSlot, &str> {
    match p.as_rule() {
        Rule::attr_null => Ok(DistSlot::Null),
        Rule::tensor_dist => Ok(DistSlot::Tensor(tensor_dist(p)?)),
        _ => Err(p.as_str()),
    }
}

/// `{mesh:{shape:[..],process_ids:[..]},operand(0):{..},result(0):{..},chunk_id:-1}`. Slots
/// must be numbered densely, operands before results, as Paddle prints them.
pub(super) fn op_dist(p: Pair<'_, Rule>) -> Result<OpDistAttr, &str> {
    let mut a = OpDistAttr {
        mesh_shape: Vec::new(),
        process_ids: Vec::new(),
        operands: Vec::new(),
        results: Vec::new(),
        chunk_id: -1,
    };
    let mut lists = 0;
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::int_list if lists == 0 => {
                a.mesh_shape = int_list(q)?;
                lists = 1;
            }
            Rule::int_list => a.process_ids = int_list(q)?,
            Rule::dist_slot => {
                let at = q.as_str();
                let mut it = q.into_inner();
                let (Some(kind), Some(index), Some(value)) = (it.next(), it.next(), it.next())
                else {
                    return Err(at);
                };
                let value = if value.as_str().starts_with('[') {
                    DistSlot::Array(
                        value
                            .into_inner()
                            .map(dist_slot_value)
                            .collect::<Result<_, _>>()?,
                    )
                } else {
                    dist_slot_value(value.into_inner().next().ok_or(at)?)?
                };
                let slots = if kind.as_str() == "operand" {
                    if !a.results.is_empty() {
                        return Err(at);
                    }
                    &mut a.operands
                } else {
                    &mut a.results
                };
                if dist_int(index)? != slots.len() as i64 {
                    return Err(at);
                }
                slots.push(value);
            }
            Rule::int => a.chunk_id = dist_int(q)?,
            _ => {}
        }
    }
    Ok(a)
}

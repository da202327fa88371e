//! `uint8` tensors print as Paddle prints them: `tensor<2xu8>` (Paddle's
//! `BasicIrPrinter::PrintType` writes `u8` for `UInt8Type`; `ui8` is only the JSON tag
//! `0.t_ui8`). Text → parse → print is the identity, a type irw builds itself prints `u8`, and
//! the JSON form round-trips through `0.t_ui8` back to `u8` text.

use irw::verify_module;
use irw::SourceFile;
use irw::{parse_module, print_module, Context, DType, Type};

tests![
    u8_text_round_trips,
    a_built_u8_type_prints_u8,
    u8_json_round_trips_to_u8_text,
];

const PROG: &str = "{\n    (%0) = \"pd_op.full\" () {dtype:uint8,place:Place(cpu),shape:[2],stop_gradient:[true],value:3} : () -> tensor<2xu8>\n    (%1) = \"pd_op.cast\" (%0) {dtype:float32,stop_gradient:[true]} : (tensor<2xu8>) -> tensor<2xf32>\n}\n";

fn u8_text_round_trips() {
    let m = parse_module(&SourceFile::new("u8.ir", PROG)).expect("parses");
    verify_module(&m).expect("verifies");
    assert_eq!(print_module(&m), PROG);
}

fn a_built_u8_type_prints_u8() {
    let mut ctx = Context::default();
    let t = ctx.intern_type(Type::Tensor {
        shape: vec![-1, 4],
        dtype: DType::U8,
    });
    assert_eq!(ctx.type_text(t), "tensor<-1x4xu8>");
    assert_eq!(DType::U8.short_name(), "u8");
    assert_eq!(DType::from_short_name("u8"), Some(DType::U8));
    assert_eq!(DType::from_short_name("ui8"), Some(DType::U8));
}

fn u8_json_round_trips_to_u8_text() {
    let m = parse_module(&SourceFile::new("u8.ir", PROG)).expect("parses");
    let j = irw::paddle_json::write_module(&m, &Default::default()).expect("writes JSON");
    assert!(j.main.contains("\"0.t_ui8\""), "{}", j.main);
    let back =
        irw::paddle_json::read_module(&SourceFile::new("u8.json", j.main)).expect("reads JSON");
    assert_eq!(print_module(&back), PROG);
}

//! Generated programs against the IR (`src/ir`): every configuration parses, verifies, and
//! prints back to the same bytes. The generator writes text without the IR, so this checks
//! each side against the other on programs no fixture covers (Momentum, AdamW, bf16 with
//! Adam, all-reduce with bf16, …).

use std::num::NonZeroUsize;

use irw::generate::{mlp, Dtype, MlpOptions, Optimizer};
use irw::verify_module;
use irw::SourceFile;
use irw::{parse_module, print_module};

tests![every_configuration_parses_verifies_and_round_trips];

fn every_configuration_parses_verifies_and_round_trips() {
    for optimizer in Optimizer::ALL {
        for dtype in Dtype::ALL {
            for allreduce in [false, true] {
                for roles in [false, true] {
                    for layers in [1, 2, 7] {
                        let opts = MlpOptions {
                            optimizer,
                            dtype,
                            allreduce,
                            roles,
                            ..MlpOptions::with_layers(NonZeroUsize::new(layers).expect("positive"))
                        };
                        let text = mlp(&opts);
                        let src = SourceFile::new("gen.ir", &text);
                        let module = parse_module(&src)
                            .unwrap_or_else(|d| panic!("{opts:?}: does not parse:\n{d}"));
                        if let Err(d) = verify_module(&module) {
                            panic!("{opts:?}: does not verify:\n{d}");
                        }
                        assert!(module.startup.is_some(), "{opts:?}: startup block lost");
                        assert_eq!(print_module(&module), text, "{opts:?}: round trip");
                    }
                }
            }
        }
    }
}

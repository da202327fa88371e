//! The kernels called directly, as the op table calls them: Paddle's recorded outputs, and the
//! refusal of every input that breaks a kernel's contract.

mod cnn_errors;
mod kernel_errors;
mod kernels_paddle;
mod kernels_paddle_loss_index;
mod kernels_paddle_misc;
mod kernels_paddle_models;
mod kernels_paddle_rope_moe;
mod kernels_paddle_volume_interp_index;
mod model_kernel_errors;
mod rnn_errors;

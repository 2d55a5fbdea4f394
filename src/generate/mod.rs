//! The generator: a chat model behind one trait ([`model`]), reached over HTTP ([`http`]) or
//! run in-process ([`local`], llama.cpp), the prompts it is sent ([`prompts`]), and reading its
//! replies ([`reply`]: the program in a reply, JSON in prose, the debugger's verdicts).

pub mod http;
pub mod local;
pub mod model;
pub mod prompts;
pub mod reply;

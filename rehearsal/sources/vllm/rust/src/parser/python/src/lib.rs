//! vllm._rust_tool_parser, the stand-in of vLLM's tool-call parser extension
//! (rehearsal). vLLM builds it with PyO3; until the rehearsal's crates
//! registry serves a crate for that, the module is written against CPython's
//! stable ABI directly (`Py_LIMITED_API` 3.8, the `.abi3.so` setuptools-rust
//! names it), with the same module name and entry point `PyInit__rust_tool_parser`.
//!
//! `extract_tool_names(text)` returns the `"name"` of every
//! `<tool_call>{...}</tool_call>` block in a model's output, in order.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

#[repr(C)]
pub struct PyObject {
    ob_refcnt: isize,
    ob_type: *mut c_void,
}

type PyCFunction = unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject;

#[repr(C)]
struct PyMethodDef {
    ml_name: *const c_char,
    ml_meth: Option<PyCFunction>,
    ml_flags: c_int,
    ml_doc: *const c_char,
}

#[repr(C)]
struct PyModuleDef_Base {
    ob_base: PyObject,
    m_init: Option<unsafe extern "C" fn() -> *mut PyObject>,
    m_index: isize,
    m_copy: *mut PyObject,
}

#[repr(C)]
struct PyModuleDef {
    m_base: PyModuleDef_Base,
    m_name: *const c_char,
    m_doc: *const c_char,
    m_size: isize,
    m_methods: *mut PyMethodDef,
    m_slots: *mut c_void,
    m_traverse: *mut c_void,
    m_clear: *mut c_void,
    m_free: *mut c_void,
}

const METH_NOARGS: c_int = 0x0004;
const METH_O: c_int = 0x0008;
const PYTHON_API_VERSION: c_int = 1013;

unsafe extern "C" {
    fn PyModule_Create2(def: *mut PyModuleDef, apiver: c_int) -> *mut PyObject;
    fn PyUnicode_FromStringAndSize(s: *const c_char, size: isize) -> *mut PyObject;
    fn PyUnicode_AsUTF8AndSize(obj: *mut PyObject, size: *mut isize) -> *const c_char;
    fn PyList_New(size: isize) -> *mut PyObject;
    fn PyList_Append(list: *mut PyObject, item: *mut PyObject) -> c_int;
    fn Py_DecRef(obj: *mut PyObject);
}

/// The names of the tool calls in `text`: `<tool_call>{"name": "NAME", ...}</tool_call>`.
pub fn extract_tool_names(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<tool_call>") {
        let body = &rest[start + "<tool_call>".len()..];
        let end = body.find("</tool_call>").unwrap_or(body.len());
        names.extend(call_name(&body[..end]));
        rest = &body[end..];
    }
    names
}

/// The `"name"` string of one tool call's JSON object, if it has one.
fn call_name(call: &str) -> Option<&str> {
    let key = call.find("\"name\"")?;
    let value = call[key + "\"name\"".len()..]
        .trim_start()
        .strip_prefix(':')?;
    let quoted = value.trim_start().strip_prefix('"')?;
    Some(&quoted[..quoted.find('"')?])
}

unsafe fn py_str(s: &str) -> *mut PyObject {
    unsafe { PyUnicode_FromStringAndSize(s.as_ptr().cast(), s.len() as isize) }
}

unsafe extern "C" fn py_extract_tool_names(_m: *mut PyObject, arg: *mut PyObject) -> *mut PyObject {
    unsafe {
        let mut size: isize = 0;
        let data = PyUnicode_AsUTF8AndSize(arg, &mut size);
        if data.is_null() {
            return ptr::null_mut(); // TypeError set by CPython
        }
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
        let text = std::str::from_utf8_unchecked(bytes);
        let list = PyList_New(0);
        if list.is_null() {
            return ptr::null_mut();
        }
        for name in extract_tool_names(text) {
            let item = py_str(name);
            if item.is_null() || PyList_Append(list, item) != 0 {
                Py_DecRef(list);
                return ptr::null_mut();
            }
            Py_DecRef(item);
        }
        list
    }
}

unsafe extern "C" fn py_version(_m: *mut PyObject, _a: *mut PyObject) -> *mut PyObject {
    unsafe { py_str(env!("CARGO_PKG_VERSION")) }
}

static mut METHODS: [PyMethodDef; 3] = [
    PyMethodDef {
        ml_name: c"extract_tool_names".as_ptr(),
        ml_meth: Some(py_extract_tool_names),
        ml_flags: METH_O,
        ml_doc: c"The names of the <tool_call> blocks of a model's output.".as_ptr(),
    },
    PyMethodDef {
        ml_name: c"version".as_ptr(),
        ml_meth: Some(py_version),
        ml_flags: METH_NOARGS,
        ml_doc: c"The crate version.".as_ptr(),
    },
    PyMethodDef {
        ml_name: ptr::null(),
        ml_meth: None,
        ml_flags: 0,
        ml_doc: ptr::null(),
    },
];

static mut MODULE: PyModuleDef = PyModuleDef {
    m_base: PyModuleDef_Base {
        ob_base: PyObject {
            ob_refcnt: 1,
            ob_type: ptr::null_mut(),
        },
        m_init: None,
        m_index: 0,
        m_copy: ptr::null_mut(),
    },
    m_name: c"_rust_tool_parser".as_ptr(),
    m_doc: c"vLLM's Rust tool-call parser (rehearsal stand-in)".as_ptr(),
    m_size: -1,
    m_methods: ptr::null_mut(),
    m_slots: ptr::null_mut(),
    m_traverse: ptr::null_mut(),
    m_clear: ptr::null_mut(),
    m_free: ptr::null_mut(),
};

/// The module's entry point, as PyO3's `#[pymodule]` would export it.
///
/// # Safety
///
/// Called by CPython's import machinery, with the GIL held, once per process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PyInit__rust_tool_parser() -> *mut PyObject {
    unsafe {
        let module = &raw mut MODULE;
        (*module).m_methods = (&raw mut METHODS).cast();
        PyModule_Create2(module, PYTHON_API_VERSION)
    }
}

#[cfg(test)]
mod tests {
    use super::extract_tool_names;

    #[test]
    fn finds_each_tool_call_name_in_order() {
        let text = r#"ok <tool_call>{"name": "get_weather", "arguments": {}}</tool_call>
            <tool_call>{"arguments": {}, "name":"search"}</tool_call> <tool_call>{}</tool_call>"#;
        assert_eq!(extract_tool_names(text), ["get_weather", "search"]);
    }
}

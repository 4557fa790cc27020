//! `VARIANT`s read by their tag. The conversion helpers of the `windows` crate call
//! propsys.dll (`VariantToInt32`…), which Wine 8 lacks (the process would abort), so
//! the union member the tag names is read directly.

use windows::Win32::System::Com::SAFEARRAY;
use windows::Win32::System::Ole::{SafeArrayGetElement, SafeArrayGetLBound, SafeArrayGetUBound};
use windows::Win32::System::Variant::{VARENUM, VARIANT, VT_ARRAY, VT_BOOL, VT_BSTR, VT_I4};

/// A `VT_I4`'s value.
pub fn int(v: &VARIANT) -> Option<i32> {
    // SAFETY: the tag says which union member is valid; only VT_I4's is read.
    (v.vt() == VT_I4).then(|| unsafe { v.Anonymous.Anonymous.Anonymous.lVal })
}

/// A `VT_BOOL`'s value.
pub fn boolean(v: &VARIANT) -> Option<bool> {
    // SAFETY: the tag says which union member is valid; only VT_BOOL's is read.
    (v.vt() == VT_BOOL).then(|| unsafe { v.Anonymous.Anonymous.Anonymous.boolVal.0 != 0 })
}

/// A `VT_BSTR`'s text.
pub fn text(v: &VARIANT) -> Option<String> {
    // SAFETY: the tag says which union member is valid; only VT_BSTR's is read, and
    // borrowed (the VARIANT still owns it).
    (v.vt() == VT_BSTR).then(|| unsafe { v.Anonymous.Anonymous.Anonymous.bstrVal.to_string() })
}

/// A `VT_ARRAY | VT_I4`'s numbers (a runtime id); empty for anything else.
pub fn ints(v: &VARIANT) -> Vec<i32> {
    if v.vt() != VARENUM(VT_ARRAY.0 | VT_I4.0) {
        return Vec::new();
    }
    // SAFETY: the tag says `parray` is a one-dimensional SAFEARRAY of i32 owned by the
    // VARIANT; elements are copied out by index within its bounds.
    unsafe {
        let psa: *const SAFEARRAY = v.Anonymous.Anonymous.Anonymous.parray;
        if psa.is_null() {
            return Vec::new();
        }
        let (Ok(lo), Ok(hi)) = (SafeArrayGetLBound(psa, 1), SafeArrayGetUBound(psa, 1)) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for i in lo..=hi {
            let mut n = 0i32;
            if SafeArrayGetElement(psa, &i, &mut n as *mut i32 as *mut _).is_err() {
                return Vec::new();
            }
            out.push(n);
        }
        out
    }
}

//! UI Automation through the system's `CUIAutomation`, the accessibility API WPF,
//! WinUI, Chromium and Electron answer. Only the COM calls are here; what the answers
//! mean, the walk and its limits are `uia_tree.rs` and `uia_model.rs`.
//!
//! One window costs two cross-process round trips: `BuildUpdatedCache` over the
//! control view of its subtree with every property the walk reads (patterns as their
//! `Is*PatternAvailable` properties and their states), then `FindAllBuildCache` of the
//! values of the elements that have a Value pattern and are not password fields, so a
//! password's value is never asked for. Wine 8 has no `CUIAutomation`
//! (`REGDB_E_CLASSNOTREG`): there [`probe`] says so and the driver reads MSAA.

use std::collections::HashMap;
use std::rc::Rc;

use cc_desktop::{DriverError, ElementHandle, ElementInfo, RawNode, SemanticAction};
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Com::{CLSCTX_INPROC_SERVER, CoCreateInstance};
use windows::Win32::System::Variant::VARIANT;
use windows::Win32::UI::Accessibility::{
    CUIAutomation, IUIAutomation, IUIAutomationCacheRequest, IUIAutomationElement,
    IUIAutomationExpandCollapsePattern, IUIAutomationInvokePattern,
    IUIAutomationSelectionItemPattern, IUIAutomationTogglePattern, IUIAutomationValuePattern,
    TreeScope, TreeScope_Element, TreeScope_Subtree, UIA_BoundingRectanglePropertyId,
    UIA_ControlTypePropertyId, UIA_ExpandCollapseExpandCollapseStatePropertyId,
    UIA_ExpandCollapsePatternId, UIA_HasKeyboardFocusPropertyId, UIA_InvokePatternId,
    UIA_IsEnabledPropertyId, UIA_IsExpandCollapsePatternAvailablePropertyId,
    UIA_IsInvokePatternAvailablePropertyId, UIA_IsKeyboardFocusablePropertyId,
    UIA_IsOffscreenPropertyId, UIA_IsPasswordPropertyId,
    UIA_IsSelectionItemPatternAvailablePropertyId, UIA_IsTogglePatternAvailablePropertyId,
    UIA_IsValuePatternAvailablePropertyId, UIA_NamePropertyId, UIA_PROPERTY_ID,
    UIA_RuntimeIdPropertyId, UIA_SelectionItemIsSelectedPropertyId, UIA_SelectionItemPatternId,
    UIA_TogglePatternId, UIA_ToggleToggleStatePropertyId, UIA_ValueIsReadOnlyPropertyId,
    UIA_ValuePatternId, UIA_ValueValuePropertyId,
};
use windows::core::BSTR;

use super::toplevel::hwnd;
use super::variant;
use crate::tree_source::TreeSource;
use crate::uia_model::{self, Call, Facts, Patterns};
use crate::uia_tree::{self, Props, UiaNode};

/// The properties one cache request brings for every element of a window.
const PROPERTIES: [UIA_PROPERTY_ID; 18] = [
    UIA_RuntimeIdPropertyId,
    UIA_NamePropertyId,
    UIA_ControlTypePropertyId,
    UIA_BoundingRectanglePropertyId,
    UIA_IsEnabledPropertyId,
    UIA_HasKeyboardFocusPropertyId,
    UIA_IsKeyboardFocusablePropertyId,
    UIA_IsOffscreenPropertyId,
    UIA_IsPasswordPropertyId,
    UIA_IsInvokePatternAvailablePropertyId,
    UIA_IsTogglePatternAvailablePropertyId,
    UIA_IsValuePatternAvailablePropertyId,
    UIA_IsSelectionItemPatternAvailablePropertyId,
    UIA_IsExpandCollapsePatternAvailablePropertyId,
    UIA_ToggleToggleStatePropertyId,
    UIA_ValueIsReadOnlyPropertyId,
    UIA_SelectionItemIsSelectedPropertyId,
    UIA_ExpandCollapseExpandCollapseStatePropertyId,
];

fn hresult(what: &str, e: &windows::core::Error) -> String {
    crate::tree_source::failure(what, e.code().0 as u32, &e.message())
}

/// A UI Automation client on this thread, or why the system has none (with the
/// HRESULT).
pub fn client() -> Result<IUIAutomation, String> {
    super::a11y::com_init();
    // SAFETY: a COM activation on a thread where COM is initialised; the object is
    // released when dropped.
    unsafe { CoCreateInstance(&CUIAutomation, None, CLSCTX_INPROC_SERVER) }
        .map_err(|e| hresult("CoCreateInstance(CUIAutomation)", &e))
}

/// The tree source this system offers.
pub fn probe() -> TreeSource {
    match client() {
        Ok(_) => TreeSource::UiAutomation,
        Err(why) => TreeSource::Msaa { why },
    }
}

/// A cache request for `properties` of the elements in `scope`; a subtree is taken in
/// the control view (what a person sees as controls, without layout-only elements).
fn request(
    uia: &IUIAutomation,
    scope: TreeScope,
    properties: &[UIA_PROPERTY_ID],
) -> windows::core::Result<IUIAutomationCacheRequest> {
    // SAFETY: calls on live COM objects with plain arguments.
    unsafe {
        let r = uia.CreateCacheRequest()?;
        for p in properties {
            r.AddProperty(*p)?;
        }
        r.SetTreeScope(scope)?;
        if scope == TreeScope_Subtree {
            r.SetTreeFilter(&uia.ControlViewCondition()?)?;
        }
        Ok(r)
    }
}

/// An element whose properties and children are in its cache.
struct Cached {
    element: IUIAutomationElement,
    values: Rc<HashMap<Vec<i32>, String>>,
}

fn cached(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> Option<VARIANT> {
    // SAFETY: a read of the element's own cache.
    unsafe { e.GetCachedPropertyValue(id) }.ok()
}

fn flag(e: &IUIAutomationElement, id: UIA_PROPERTY_ID) -> bool {
    cached(e, id).and_then(|v| variant::boolean(&v)) == Some(true)
}

fn runtime_id(e: &IUIAutomationElement) -> Vec<i32> {
    cached(e, UIA_RuntimeIdPropertyId)
        .map(|v| variant::ints(&v))
        .unwrap_or_default()
}

fn props(e: &IUIAutomationElement) -> Props {
    let int = |id| cached(e, id).and_then(|v| variant::int(&v));
    let boolean = |id| cached(e, id).and_then(|v| variant::boolean(&v));
    // SAFETY: reads of the element's own cache.
    let (name, control_type, rect) = unsafe {
        (
            e.CachedName().map(|b| b.to_string()).unwrap_or_default(),
            e.CachedControlType().map(|t| t.0).unwrap_or(0),
            e.CachedBoundingRectangle().ok(),
        )
    };
    let rect = rect.and_then(|r| {
        uia_model::rect(
            f64::from(r.left),
            f64::from(r.top),
            f64::from(r.right) - f64::from(r.left),
            f64::from(r.bottom) - f64::from(r.top),
        )
    });
    let has = |id| flag(e, id);
    Props {
        runtime_id: runtime_id(e),
        name,
        control_type,
        rect,
        facts: Facts {
            focused: has(UIA_HasKeyboardFocusPropertyId),
            focusable: has(UIA_IsKeyboardFocusablePropertyId),
            enabled: has(UIA_IsEnabledPropertyId),
            offscreen: has(UIA_IsOffscreenPropertyId),
            password: has(UIA_IsPasswordPropertyId),
        },
        patterns: Patterns {
            invoke: has(UIA_IsInvokePatternAvailablePropertyId),
            toggle: has(UIA_IsTogglePatternAvailablePropertyId)
                .then(|| int(UIA_ToggleToggleStatePropertyId).unwrap_or(0)),
            value_read_only: has(UIA_IsValuePatternAvailablePropertyId)
                .then(|| boolean(UIA_ValueIsReadOnlyPropertyId).unwrap_or(true)),
            selection_item: has(UIA_IsSelectionItemPatternAvailablePropertyId)
                .then(|| boolean(UIA_SelectionItemIsSelectedPropertyId).unwrap_or(false)),
            expand_collapse: has(UIA_IsExpandCollapsePatternAvailablePropertyId)
                .then(|| int(UIA_ExpandCollapseExpandCollapseStatePropertyId).unwrap_or(0)),
        },
    }
}

impl UiaNode for Cached {
    fn props(&self) -> Props {
        props(&self.element)
    }

    fn value(&self) -> Option<String> {
        self.values.get(&runtime_id(&self.element)).cloned()
    }

    fn children(&self) -> Vec<Cached> {
        // SAFETY: reads of the element's cache; an element without children answers
        // no array, which is an empty list.
        unsafe {
            let Ok(array) = self.element.GetCachedChildren() else {
                return Vec::new();
            };
            let n = array.Length().unwrap_or(0);
            (0..n)
                .filter_map(|i| array.GetElement(i).ok())
                .map(|element| Cached {
                    element,
                    values: self.values.clone(),
                })
                .collect()
        }
    }
}

/// The values of the elements under `root` with a Value pattern that are not password
/// fields, by runtime id: one round trip, asked only of those elements.
fn values(
    uia: &IUIAutomation,
    root: &IUIAutomationElement,
) -> windows::core::Result<HashMap<Vec<i32>, String>> {
    let req = request(
        uia,
        TreeScope_Element,
        &[
            UIA_RuntimeIdPropertyId,
            UIA_IsPasswordPropertyId,
            UIA_ValueValuePropertyId,
        ],
    )?;
    let mut out = HashMap::new();
    // SAFETY: calls on live COM objects; the VARIANTs are owned and dropped here.
    unsafe {
        let has_value =
            uia.CreatePropertyCondition(UIA_IsValuePatternAvailablePropertyId, &true.into())?;
        let not_password = uia.CreatePropertyCondition(UIA_IsPasswordPropertyId, &false.into())?;
        let which = uia.CreateAndCondition(&has_value, &not_password)?;
        let found = root.FindAllBuildCache(TreeScope_Subtree, &which, &req)?;
        for i in 0..found.Length()? {
            let e = found.GetElement(i)?;
            if flag(&e, UIA_IsPasswordPropertyId) {
                continue;
            }
            if let Some(v) = cached(&e, UIA_ValueValuePropertyId).and_then(|v| variant::text(&v)) {
                out.insert(runtime_id(&e), v);
            }
        }
    }
    Ok(out)
}

/// The cached subtree of one top-level window, or why UI Automation cannot read it.
fn snapshot(uia: &IUIAutomation, window: u64) -> Result<Cached, String> {
    let h: HWND = hwnd(window);
    // SAFETY: calls on live COM objects with a window handle value (UI Automation
    // checks it).
    let root = unsafe { uia.ElementFromHandle(h) }
        .map_err(|e| hresult("IUIAutomation::ElementFromHandle", &e))?;
    let req = request(uia, TreeScope_Subtree, &PROPERTIES)
        .map_err(|e| hresult("IUIAutomation::CreateCacheRequest", &e))?;
    // SAFETY: as above.
    let element = unsafe { root.BuildUpdatedCache(&req) }
        .map_err(|e| hresult("IUIAutomationElement::BuildUpdatedCache", &e))?;
    // Without the values the tree is still right, only without values.
    let values = values(uia, &element).unwrap_or_default();
    Ok(Cached {
        element,
        values: Rc::new(values),
    })
}

/// The tree of one top-level window through UI Automation, or why not (the driver
/// then reads the window through MSAA). `Ok(None)` once the budget is spent.
pub fn window_tree(
    uia: &IUIAutomation,
    window: u64,
    budget: &mut usize,
) -> Result<Option<RawNode>, String> {
    let root = snapshot(uia, window)?;
    Ok(uia_tree::window_tree(window, &root, budget))
}

/// The element a `uia:` handle names, found again under its window, and whether it
/// is the window's root. `Ok(None)`: the window or the element is gone.
fn resolve(handle: &ElementHandle) -> Result<Option<(u64, Cached, bool)>, DriverError> {
    let Some((window, id)) = uia_model::parse_handle(&handle.0) else {
        return Ok(None);
    };
    let uia = client().map_err(DriverError::Unavailable)?;
    if !super::toplevel::exists(window) {
        return Ok(None);
    }
    let Ok(root) = snapshot(&uia, window) else {
        return Ok(None);
    };
    Ok(uia_tree::find(root, &id).map(|(n, top)| (window, n, top)))
}

/// The current facts of a `uia:` element, `None` when it is gone.
pub fn element(handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
    Ok(resolve(handle)?.map(|(window, n, top)| uia_tree::info(window, &n, top)))
}

fn gone() -> DriverError {
    DriverError::Failed("the element is gone".into())
}

fn failed(what: &str) -> impl Fn(windows::core::Error) -> DriverError + '_ {
    move |e| DriverError::Failed(hresult(what, &e))
}

/// Performs `action` through the element's pattern (or focus, for an edit).
pub fn perform(handle: &ElementHandle, action: SemanticAction) -> Result<(), DriverError> {
    let (_, n, top) = resolve(handle)?.ok_or_else(gone)?;
    let p = n.props();
    let call = uia_tree::plan(action, &p, top).map_err(DriverError::Unavailable)?;
    let e = &n.element;
    // SAFETY: calls on a live element and the pattern objects it hands out.
    unsafe {
        match call {
            Call::Invoke => e
                .GetCurrentPatternAs::<IUIAutomationInvokePattern>(UIA_InvokePatternId)
                .and_then(|x| x.Invoke())
                .map_err(failed("InvokePattern::Invoke")),
            Call::Toggle => e
                .GetCurrentPatternAs::<IUIAutomationTogglePattern>(UIA_TogglePatternId)
                .and_then(|x| x.Toggle())
                .map_err(failed("TogglePattern::Toggle")),
            Call::Select => e
                .GetCurrentPatternAs::<IUIAutomationSelectionItemPattern>(
                    UIA_SelectionItemPatternId,
                )
                .and_then(|x| x.Select())
                .map_err(failed("SelectionItemPattern::Select")),
            Call::ExpandOrCollapse => e
                .GetCurrentPatternAs::<IUIAutomationExpandCollapsePattern>(
                    UIA_ExpandCollapsePatternId,
                )
                .and_then(|x| {
                    if p.patterns.expand_collapse == Some(1) {
                        x.Collapse()
                    } else {
                        x.Expand()
                    }
                })
                .map_err(failed("ExpandCollapsePattern")),
            Call::Focus => e
                .SetFocus()
                .map_err(failed("IUIAutomationElement::SetFocus")),
        }
    }
}

/// Writes `text` through the element's Value pattern.
pub fn set_text(handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
    let (_, n, _) = resolve(handle)?.ok_or_else(gone)?;
    uia_tree::check_settable(&n.props()).map_err(DriverError::Unavailable)?;
    let bstr = BSTR::from(text);
    // SAFETY: calls on a live element; the BSTR lives across the call.
    unsafe {
        n.element
            .GetCurrentPatternAs::<IUIAutomationValuePattern>(UIA_ValuePatternId)
            .and_then(|x| x.SetValue(&bstr))
            .map_err(failed("ValuePattern::SetValue"))
    }
}

/// Whether the element with keyboard focus is a password field (`IsPassword`); `None`
/// when UI Automation cannot say.
pub fn focused_is_password(uia: &IUIAutomation) -> Option<bool> {
    // SAFETY: calls on live COM objects.
    unsafe {
        let e = uia.GetFocusedElement().ok()?;
        e.CurrentIsPassword().ok().map(|b| b.as_bool())
    }
}

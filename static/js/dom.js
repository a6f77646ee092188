// The little DOM builder the scripts that draw in the page share (the annotation panel, the
// adjudicator's walk, the amend form). Text is appended as text nodes, never parsed as HTML.

  // h("button", {type: "button", class: "small", "data-step": step}, kbd("1"), " Yes"): null, undefined and false
  // attributes and children are left out; an attribute set to true is present and empty.
  export function h(tag, attributes, ...children) {
    const element = document.createElement(tag);
    Object.entries(attributes || {}).forEach(([name, value]) => {
      if (value === null || value === undefined || value === false) { return; }
      if (name === "class") { element.className = value; } else { element.setAttribute(name, value === true ? "" : value); }
    });
    children.flat().forEach((child) => {
      if (child === null || child === undefined || child === false) { return; }
      element.append(child instanceof Node ? child : document.createTextNode(String(child)));
    });
    return element;
  }
  export const kbd = (key) => h("kbd", null, key);


// The annotation page's one request line, shared by its writers (an ES module).
//
// workspace.js sets `line.current` to its outbox's handle (exclusive, version, pathOf, drain, setVersion) once the
// page is set up; claims.js and qa_workspace.js send through it, so one request is on the wire at a time.
export const line = { current: null };

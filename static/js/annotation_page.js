// The annotation screen's one entry point: templates/workspace/annotate.html loads this module, and the imports
// below load the rest in order (each module imports what it uses; nothing is shared through window.*).
// workspace.js draws the screen and owns the request line (annotation_saving.js) that the claims panels and the
// question dialog send through; unit_flags.js is the flag dialog.
import "./workspace.js";
import "./qa_workspace.js";
import "./unit_flags.js";
import "./claims.js";

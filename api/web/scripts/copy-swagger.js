// Copy the Swagger UI assets of /docs from the npm package into static/, so that the API page
// is served by the API itself and renders without a network (no CDN at run time).
const fs = require("fs");
const path = require("path");

const from = path.dirname(require.resolve("swagger-ui-dist/package.json"));
for (const name of ["swagger-ui-bundle.js", "swagger-ui.css"]) {
  // The source-map comment would make browsers ask for a map that is not shipped.
  const text = fs.readFileSync(path.join(from, name), "utf8").replace(/\n\/[/*]# sourceMappingURL=[^\n]*\s*$/, "\n");
  fs.writeFileSync(path.join(__dirname, "..", "static", name), text);
}

// ESLint over our browser scripts (static/) and the node tests' helpers (tests/js/), run by
// `make lint`. One style: strict IIFE modules (scripts, not ES modules: a page and a
// file:// build load them as plain <script>s), const and let, ===, functions of at most 80
// lines.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: {...globals.browser, Bokeh: "readonly", module: "readonly"},
    },
    rules: {
      "no-var": "error",
      "prefer-const": ["error", {destructuring: "all"}],
      // a `catch (error)` that ignores the error is meant (storage, JSON that may be absent)
      "no-unused-vars": ["error", {vars: "local", caughtErrors: "none"}],
      "eqeqeq": ["error", "always", {null: "ignore"}],
      "max-lines-per-function": ["error", {max: 80, skipBlankLines: true, skipComments: true}],
    },
  },
  {
    // each function's body is a Bokeh model's code, read by app/kit/model_code.py: none is
    // called here
    files: ["static/model_code.js"],
    rules: {"no-unused-vars": "off"},
  },
  {
    files: ["tests/js/**/*.js"],
    languageOptions: {ecmaVersion: 2022, sourceType: "commonjs", globals: {...globals.node}},
  },
];

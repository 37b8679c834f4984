"""Hosting: everything that turns the panels into a site and serves it.

- `cli`: the `attention-explorable` command (serve, build, numbers);
- `server`: the live Panel server and its routes' pages; `serve_panel`: the same for
  `panel serve`;
- `build`: the static site; `static_site`: serving it beside the live routes;
- `security`: headers, origins and the admin page; `options`: the serve command's options;
- `routes`: every route and its title, read by the server, the build and the tests.

Panels, the core and the kernel lab never import from here.
"""

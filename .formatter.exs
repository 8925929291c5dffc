[
  import_deps: [:nx],
  inputs: ["{mix,.formatter}.exs", "{config,lib,test,tools,examples,mix,bench}/**/*.{ex,exs}"]
]

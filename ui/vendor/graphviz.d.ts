// At run time the page loads Graphviz (WebAssembly inside) from ./vendor/graphviz.js, which the build copies from
// @hpcc-js/wasm-graphviz; its types are the package's own.
export * from '@hpcc-js/wasm-graphviz'

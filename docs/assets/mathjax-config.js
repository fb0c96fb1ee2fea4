// MathJax 2 (Debian's libjs-mathjax, copied into the site by scripts/dev.sh
// docs): typeset the <script type="math/tex"> that pymdownx.arithmatex emits,
// as SVG, which needs no web fonts.
window.MathJax = {
  jax: ["input/TeX", "output/SVG"],
  extensions: ["tex2jax.js"],
  TeX: { extensions: ["AMSmath.js", "AMSsymbols.js"] },
  tex2jax: { inlineMath: [], displayMath: [], processEscapes: false },
  messageStyle: "none",
  showMathMenu: false,
};

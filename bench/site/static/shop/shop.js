// Meridian Shop — listing, filters, cart badge and the shop's WebMCP tools.
(function () {
  "use strict";
  var $ = mrd.$, h = mrd.h;
  var catalogue = [];
  var cart = { items: {}, count: 0 };

  function stars(rating) {
    var full = Math.round(rating);
    var svg = '<svg class="i" viewBox="0 0 100 20" aria-hidden="true" style="width:70px">';
    for (var i = 0; i < 5; i++) {
      svg += '<polygon points="' + (i * 20 + 10) + ',1 ' + (i * 20 + 13) + ',8 ' + (i * 20 + 19) + ',8 ' + (i * 20 + 14) + ',12 ' +
        (i * 20 + 16) + ',19 ' + (i * 20 + 10) + ',15 ' + (i * 20 + 4) + ',19 ' + (i * 20 + 6) + ',12 ' + (i * 20 + 1) + ',8 ' +
        (i * 20 + 7) + ',8" fill="' + (i < full ? "#f0a500" : "none") + '"/>';
    }
    return svg + "</svg>";
  }

  function setBadge() {
    $("#cart-count").textContent = String(cart.count);
    $("#cart-link").setAttribute("aria-label", "Cart, " + cart.count + (cart.count === 1 ? " item" : " items"));
  }

  function card(p) {
    var inCart = cart.items[p.sku] > 0;
    var button = h("button", {
      class: "btn" + (inCart ? " is-in-cart" : ""), type: "button", "data-sku": p.sku,
      "aria-label": inCart ? p.name + " is in your cart" : "Add " + p.name + " to cart",
      text: inCart ? "In cart" : "Add to cart",
    });
    if (!p.inStock) {
      button.textContent = "Sold out";
      button.removeAttribute("aria-label");
      button.disabled = true;
    }
    button.addEventListener("click", function () { add(p.sku, 1).catch(function (e) { mrd.toast(e.message); }); });
    var img = h("img", { loading: "lazy", width: "320", height: "200", alt: p.name, src: mrd.cdn + "/img/" + p.sku + ".svg" });
    return h("article", { class: "card", "data-sku": p.sku, "aria-labelledby": "name-" + p.sku }, [
      img,
      h("div", { class: "body" }, [
        h("span", { class: "meta", text: p.category }),
        h("h3", { id: "name-" + p.sku }, [h("a", { href: "#p-" + p.sku, text: p.name })]),
        h("span", { class: "meta", html: stars(p.rating) + ' <span>' + p.rating.toFixed(1) + " (" + p.reviews + " reviews)</span>" }),
        h("span", { class: "price", text: "$" + p.price.toFixed(2) }),
        h("div", { class: "actions" }, [
          button,
          h("button", { class: "icon-btn", type: "button", "aria-label": "Save " + p.name + " to your wish list",
            html: '<svg class="i" viewBox="0 0 24 24" aria-hidden="true"><path d="M12 20s-7-4.5-7-10a4 4 0 0 1 7-2.5A4 4 0 0 1 19 10c0 5.5-7 10-7 10z"/></svg>' }),
        ]),
      ]),
    ]);
  }

  function visible() {
    var cats = mrd.$$("#category-filters input:checked").map(function (i) { return i.value; });
    var max = Number($("#max-price").value || Infinity);
    var stock = $("#in-stock").checked;
    var list = catalogue.filter(function (p) {
      return (!cats.length || cats.indexOf(p.category) >= 0) && p.price <= max && (!stock || p.inStock);
    });
    var sort = $("#sort").value;
    if (sort === "price-asc") list.sort(function (a, b) { return a.price - b.price; });
    if (sort === "price-desc") list.sort(function (a, b) { return b.price - a.price; });
    if (sort === "rating") list.sort(function (a, b) { return b.rating - a.rating; });
    return list;
  }

  function render() {
    var list = visible();
    $("#products").replaceChildren.apply($("#products"), list.map(card));
    $("#result-count").textContent = list.length + " of " + catalogue.length + " products";
  }

  function filters() {
    var cats = [];
    catalogue.forEach(function (p) { if (cats.indexOf(p.category) < 0) cats.push(p.category); });
    $("#category-filters").replaceChildren.apply($("#category-filters"), cats.map(function (c) {
      var box = h("input", { type: "checkbox", value: c });
      box.addEventListener("change", render);
      return h("label", {}, [box, " " + c]);
    }));
    ["#max-price", "#in-stock", "#sort"].forEach(function (sel) { $(sel).addEventListener("change", render); });
  }

  function add(sku, quantity) {
    return mrd.json("/api/cart", { body: { sku: sku, quantity: quantity } }).then(function (r) {
      cart.items[sku] = r.inCart;
      cart.count = r.count;
      setBadge();
      var button = $('#products button[data-sku="' + sku + '"]');
      if (button) {
        button.textContent = "In cart";
        button.classList.add("is-in-cart");
        button.setAttribute("aria-label", r.name + " is in your cart");
      }
      mrd.toast("Added " + quantity + " × " + r.name + " to your cart (" + r.inCart + " in cart)");
      return r;
    });
  }

  function strip() {
    mrd.$$("img[data-hold]").forEach(function (img) { img.src = mrd.cdn + "/img/hold/" + img.dataset.hold; });
  }

  // The tools come once the data is there: an agent never sees an empty catalogue.
  function registerTools() {
    mrd.tool({
      name: "search_products",
      title: "Search products",
      description: "Search the Meridian catalogue by words in the product name or category. Returns matching products with sku, name, price and stock.",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", description: "Words to look for, e.g. 'rain shell'" },
          maxResults: { type: "integer", minimum: 1, maximum: 40, description: "At most this many (default 10)" },
        },
        required: ["query"],
      },
      annotations: { readOnlyHint: true },
      execute: async function (input) {
        var words = String(input.query || "").toLowerCase().split(/\s+/).filter(Boolean);
        var max = input.maxResults || 10;
        var hits = catalogue.filter(function (p) {
          var hay = (p.name + " " + p.category).toLowerCase();
          return words.every(function (w) { return hay.indexOf(w) >= 0; });
        });
        return { total: hits.length, products: hits.slice(0, max).map(function (p) {
          return { sku: p.sku, name: p.name, price: p.price, inStock: p.inStock };
        }) };
      },
    });

    mrd.tool({
      name: "add_to_cart",
      title: "Add to cart",
      description: "Put a product in the shopper's cart.",
      inputSchema: {
        type: "object",
        properties: {
          sku: { type: "string", description: "Product code, e.g. MR-1001" },
          quantity: { type: "integer", minimum: 1, maximum: 99, description: "How many" },
        },
        required: ["sku", "quantity"],
      },
      execute: async function (input) {
        var r = await add(String(input.sku || ""), input.quantity);
        return { sku: r.sku, added: input.quantity, inCart: r.inCart, cartCount: r.count };
      },
    });
  }

  Promise.all([mrd.json("/api/products"), mrd.json("/api/cart")]).then(function (res) {
    catalogue = res[0].products;
    cart = res[1];
    setBadge();
    filters();
    var q = new URLSearchParams(location.search).get("q");
    if (q) $("#q").value = q;
    render();
    registerTools();
    strip();
  }).catch(function (e) { $("#result-count").textContent = "Could not load products: " + e.message; });
})();

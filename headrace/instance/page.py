"""The instance's web page: plain HTML, CSS and inline JavaScript drawing SVG plots (no CDN,
works offline). ``/`` lists processors and workers; ``/processors/{name}`` plots throughput,
watermark lag and DLQ over time with its stats, recent outputs and DLQ entries. The page reads
the JSON API with the login cookie and refreshes every second.
"""
from __future__ import annotations

import html

_CSS = """
body{font:14px system-ui,sans-serif;margin:1.2em 2em;color:#1d2330;background:#f7f8fa}
h1{font-size:1.4em;margin:.2em 0 .6em} h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;background:#fff;min-width:60%} td,th{padding:.35em .8em;border-bottom:1px solid #e3e6eb;
text-align:left} th{background:#eef1f5} a{color:#1a5fb4}
.STARTED{color:#1b7f3b;font-weight:600}.FAILED{color:#b3261e;font-weight:600}.STOPPED{color:#7a5d00}
.CREATED{color:#555}.plots{display:flex;gap:1em;flex-wrap:wrap}.plot{background:#fff;border:1px solid #e3e6eb;
padding:.5em;border-radius:6px}.plot h3{margin:0 0 .3em;font-size:.95em}.latest{font-weight:600}
pre{background:#fff;border:1px solid #e3e6eb;padding:.6em;max-height:22em;overflow:auto;font-size:12px}
.muted{color:#777}
"""

_COMMON_JS = r"""
async function api(path){const r=await fetch(path,{credentials:'same-origin'});
 if(!r.ok) throw new Error(path+': '+r.status); return r.json();}
function esc(s){return String(s==null?'':s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));}
function fmt(v,d){return v==null?'–':(typeof v==='number'?(Math.round(v*100)/100).toString():esc(v));}
"""

_INDEX_JS = r"""
async function refresh(){
 try{
  const procs=await api('/api/processors'); const workers=await api('/api/workers');
  document.getElementById('procs').innerHTML=procs.map(p=>`<tr data-name="${esc(p.name)}">
   <td><a href="/processors/${encodeURIComponent(p.name)}">${esc(p.name)}</a></td>
   <td class="${esc(p.state)}">${esc(p.state)}</td><td>${p.worker==null?'–':p.worker+' / '+p.slot}</td>
   <td class="throughput">${fmt(p.throughput)}</td><td>${fmt(p.inputMessageCount)}</td>
   <td>${fmt(p.outputMessageCount)}</td><td>${fmt(p.watermark)}</td><td>${fmt(p.watermarkLagSeconds)}</td>
   <td>${fmt(p.dlqMessageCount)}</td><td class="muted">${esc(p.lastError||'')}</td></tr>`).join('');
  document.getElementById('workers').innerHTML=workers.map(w=>`<tr><td>${w.id}</td><td>${w.pid}</td>
   <td>${esc(w.tier)}</td><td>${w.role==='process'?`<span class="muted">ephemeral runs: ${fmt(w.runs)}</span>`:w.slots.map(s=>s==null?'<span class="muted">free</span>':esc(s)).join(' · ')}</td></tr>`).join('');
  document.getElementById('updated').textContent='updated '+new Date().toISOString();
 }catch(e){document.getElementById('updated').textContent=String(e);}
}
refresh(); setInterval(refresh,1000);
"""

_PROC_JS = r"""
const NAME=document.body.dataset.name;
function plot(id,pts,key,unit){
 const el=document.getElementById(id); const W=360,H=150,P=30;
 const xs=pts.map(p=>p.t), ys=pts.map(p=>p[key]).map(v=>v==null?null:v);
 const vals=ys.filter(v=>v!=null);
 let svg=`<svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" data-points="${vals.length}">`+
   `<rect x="${P}" y="5" width="${W-P-5}" height="${H-P}" fill="#fbfcfd" stroke="#ccd"/>`;
 if(vals.length){
  const x0=Math.min(...xs),x1=Math.max(...xs)||x0+1,y0=Math.min(0,...vals),y1=Math.max(...vals,1e-9);
  const sx=t=>P+(W-P-5)*((t-x0)/((x1-x0)||1)), sy=v=>5+(H-P)*(1-(v-y0)/((y1-y0)||1));
  const line=pts.map((p,i)=>ys[i]==null?null:`${sx(p.t).toFixed(1)},${sy(ys[i]).toFixed(1)}`).filter(Boolean).join(' ');
  svg+=`<polyline fill="none" stroke="#1a5fb4" stroke-width="2" points="${line}"/>`+
   `<text x="2" y="14" font-size="10">${fmt(y1)}</text><text x="2" y="${H-P+5}" font-size="10">${fmt(y0)}</text>`+
   `<text x="${P}" y="${H-8}" font-size="10">last ${Math.round(x1-x0)} s</text>`;
 }
 el.querySelector('.svg').innerHTML=svg+'</svg>';
 el.querySelector('.latest').textContent=vals.length?fmt(vals[vals.length-1])+' '+unit:'no data yet';
}
async function refresh(){
 try{
  const tl=await api(`/api/processors/${encodeURIComponent(NAME)}/timeline`);
  const rate=tl.map((p,i)=>({t:p.t,v:i?Math.max(0,(p.input-tl[i-1].input)/((p.t-tl[i-1].t)||1)):null}));
  plot('p-throughput',rate,'v','docs/s'); plot('p-lag',tl,'watermarkLagSeconds','s'); plot('p-dlq',tl,'dlq','docs');
  const st=await api(`/api/processors/${encodeURIComponent(NAME)}/stats?verbose=true`);
  delete st.history;
  document.getElementById('state').textContent=st.state; document.getElementById('state').className=st.state;
  document.getElementById('where').textContent=st.worker==null?'not placed':`worker ${st.worker}, slot ${st.slot}`;
  document.getElementById('stats').textContent=JSON.stringify(st,null,1);
  const sm=await api(`/api/processors/${encodeURIComponent(NAME)}/sample?limit=10`);
  document.getElementById('sample').textContent=sm.outputs.map(d=>JSON.stringify(d)).join('\n')||'(none yet)';
  document.getElementById('dlq').textContent=sm.dlq.map(d=>JSON.stringify(d)).join('\n')||'(none)';
  document.getElementById('updated').textContent='updated '+new Date().toISOString();
 }catch(e){document.getElementById('updated').textContent=String(e);}
}
refresh(); setInterval(refresh,1000);
"""


def _doc(title: str, body: str, script: str = "", data_name: str | None = None) -> str:
    attr = f' data-name="{html.escape(data_name)}"' if data_name is not None else ""
    js = f"<script>{_COMMON_JS}{script}</script>" if script else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body{attr}>{body}{js}</body></html>")


def index_html() -> str:
    body = """<h1>headrace instance</h1><div class="muted" id="updated"></div>
<h2>Processors</h2><table><thead><tr><th>name</th><th>state</th><th>worker / slot</th><th>docs/s</th>
<th>in</th><th>out</th><th>watermark</th><th>lag (s)</th><th>DLQ</th><th>last error</th></tr></thead>
<tbody id="procs"></tbody></table>
<h2>Workers</h2><table><thead><tr><th>id</th><th>pid</th><th>tier</th><th>slots</th></tr></thead>
<tbody id="workers"></tbody></table>
<p class="muted">API: <a href="/docs">/docs</a> · <a href="/openapi.json">/openapi.json</a></p>"""
    return _doc("headrace instance", body, _INDEX_JS)


def processor_html(name: str) -> str:
    n = html.escape(name)
    plots = "".join(f'<div class="plot" id="p-{k}"><h3>{t} <span class="latest"></span></h3><div class="svg"></div></div>'
                    for k, t in (("throughput", "throughput"), ("lag", "watermark lag"), ("dlq", "DLQ")))
    body = f"""<p><a href="/">← all processors</a></p><h1>{n} <span id="state"></span></h1>
<div id="where" class="muted"></div><div class="muted" id="updated"></div>
<div class="plots">{plots}</div>
<h2>Stats</h2><pre id="stats"></pre><h2>Recent outputs</h2><pre id="sample"></pre>
<h2>Recent DLQ entries</h2><pre id="dlq"></pre>"""
    return _doc(f"headrace · {name}", body, _PROC_JS, data_name=name)


def login_html(message: str = "", next_path: str = "/") -> str:
    msg = f'<p class="FAILED">{html.escape(message)}</p>' if message else ""
    body = f"""<h1>headrace instance</h1>{msg}<p>Paste an admin or reader token.</p>
<form method="post" action="/login"><input type="password" name="token" size="40">
<input type="hidden" name="next" value="{html.escape(next_path)}"><button>Open</button></form>"""
    return _doc("headrace · login", body)


__all__ = ["index_html", "processor_html", "login_html"]

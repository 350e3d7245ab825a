// Tools and a node written in JavaScript inside nginx (njs js_content),
// called by the agent module as subrequests: a JSON POST in, JSON out.

function weather(r) {
    var a = JSON.parse(r.requestText);
    r.headersOut['Content-Type'] = 'application/json';
    r.return(200, JSON.stringify({
        city: a.city, celsius: 21, method: r.method,
        type: r.headersIn['Content-Type'],
        cookie: r.headersIn['Cookie'] || null,
    }));
}

function big(r) {
    r.return(200, 'x'.repeat(5000));
}

function slow(r) {
    setTimeout(function () { r.return(200, '{"late": true}'); }, 3000);
}

function score(r) {
    var a = JSON.parse(r.requestText);
    r.headersOut['Content-Type'] = 'application/json';
    r.return(200, JSON.stringify({
        score: { chars: a.input.length, messages: a.messages.length },
        input_chars: a.input.length,
        not_a_channel: true,
    }));
}

function prose(r) {
    r.return(200, 'this is not JSON');
}

export default { weather, big, slow, score, prose };
